import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decoded } from '@switchyard/platform/codec/avro-codec';
import { callType, keyMayBelongTo, liveCall } from './live-call.js';

const base = { messageId: 'm-1', sourceId: 'src', userId: 'u-1', anonymousId: null, timestamp: Date.UTC(2025, 0, 2, 3, 4, 5, 6), originalTimestamp: null, sentAt: null, receivedAt: Date.UTC(2025, 0, 2, 3, 4, 5, 10), context: '{"ip":"1.2.3.4"}', integrations: null };

describe('live feed view of an ingest record', () => {
  it('a track call: event as the name, JSON text fields parsed, times in ISO 8601', () => {
    const decoded = { name: 'io.switchyard.event.Track', schemaId: 1, value: { ...base, event: 'Order Completed', properties: '{"total":3}' } } as Decoded;
    const live = liveCall(decoded)!;
    assert.deepEqual({ ...live, call: undefined }, {
      messageId: 'm-1', type: 'track', name: 'Order Completed', userId: 'u-1', anonymousId: null,
      timestamp: '2025-01-02T03:04:05.006Z', receivedAt: '2025-01-02T03:04:05.010Z', call: undefined,
    });
    assert.deepEqual(live.call, {
      type: 'track', ...base, event: 'Order Completed', properties: { total: 3 }, context: { ip: '1.2.3.4' },
      timestamp: '2025-01-02T03:04:05.006Z', receivedAt: '2025-01-02T03:04:05.010Z',
    });
    assert.deepEqual(Object.keys(live.call).slice(0, 2), ['type', 'messageId']);
  });

  it('page and screen calls are named by their name; identify has no name', () => {
    assert.equal(liveCall({ name: 'io.switchyard.event.Page', schemaId: 1, value: { ...base, name: 'Home', category: null, properties: null } } as Decoded)!.name, 'Home');
    assert.equal(liveCall({ name: 'io.switchyard.event.Screen', schemaId: 1, value: { ...base, name: null, category: null, properties: null } } as Decoded)!.name, null);
    const identify = liveCall({ name: 'io.switchyard.event.Identify', schemaId: 1, value: { ...base, traits: 'not json' } } as Decoded)!;
    assert.equal(identify.name, null);
    assert.equal(identify.call['traits'], 'not json', 'unparseable JSON text is shown as it is');
  });

  it('records that are not calls are not shown', () => {
    assert.equal(liveCall({ name: 'io.switchyard.pipeline.DeliveryTask', schemaId: 1, value: {} } as Decoded), undefined);
    assert.equal(callType('io.switchyard.event.Alias'), 'alias');
  });

  it('the key test skips other sources without decoding, and keeps keyless or odd records for a decode', () => {
    const watched = new Set(['a', 'b']);
    assert.equal(keyMayBelongTo(Buffer.from('a:user'), watched), true);
    assert.equal(keyMayBelongTo(Buffer.from('c:user'), watched), false);
    assert.equal(keyMayBelongTo(Buffer.from('ab:user'), watched), false);
    assert.equal(keyMayBelongTo(null, watched), true);
    assert.equal(keyMayBelongTo(Buffer.from('no-colon'), watched), true);
  });
});
