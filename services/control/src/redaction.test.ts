import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LiveCall } from './live-call.js';
import { deadLetterMetadata, liveCallMetadata } from './redaction.js';

describe('metadata redaction', () => {
  it('a live call keeps who, what and when, and drops properties, traits, context, integrations and any unknown field', () => {
    const call: LiveCall = {
      messageId: 'm1', type: 'identify', name: null, userId: 'u1', anonymousId: null, timestamp: '2026-11-29T10:00:00.000Z', receivedAt: '2026-11-29T10:00:01.000Z',
      call: {
        type: 'identify', messageId: 'm1', sourceId: 'src_1', userId: 'u1', anonymousId: null, timestamp: '2026-11-29T10:00:00.000Z', receivedAt: '2026-11-29T10:00:01.000Z',
        traits: { email: 'a@example.com' }, properties: { total: 5 }, context: { ip: '203.0.113.9', traits: { plan: 'x' } }, integrations: { All: true }, somethingNew: 'secret',
      },
    };
    const redacted = liveCallMetadata(call);
    assert.deepEqual(redacted.call, { type: 'identify', messageId: 'm1', sourceId: 'src_1', userId: 'u1', anonymousId: null, timestamp: '2026-11-29T10:00:00.000Z', receivedAt: '2026-11-29T10:00:01.000Z' });
    assert.equal(redacted.messageId, 'm1');
    assert.ok(!JSON.stringify(redacted).includes('example.com') && !JSON.stringify(redacted).includes('secret'));
    assert.ok('traits' in call.call, 'the original is left as it was');
  });

  it('a track call keeps its event name; a group its groupId; an alias its previousId', () => {
    const base = { messageId: 'm', name: null, userId: 'u', anonymousId: null, timestamp: 't', receivedAt: 'r' };
    assert.deepEqual(liveCallMetadata({ ...base, type: 'track', call: { type: 'track', event: 'Order Completed', properties: { total: 1 } } }).call, { type: 'track', event: 'Order Completed' });
    assert.deepEqual(liveCallMetadata({ ...base, type: 'group', call: { type: 'group', groupId: 'g', traits: { a: 1 } } }).call, { type: 'group', groupId: 'g' });
    assert.deepEqual(liveCallMetadata({ ...base, type: 'alias', call: { type: 'alias', previousId: 'p' } }).call, { type: 'alias', previousId: 'p' });
  });

  it('a dead letter loses its body and response excerpt, keeps the rest', () => {
    const letter = { id: '0-1', reason: 'permanent_status', status: 400, responseExcerpt: 'echo {"email":"a@example.com"}', error: null, messageId: 'm' };
    assert.deepEqual(deadLetterMetadata(letter), { ...letter, responseExcerpt: null });
    assert.deepEqual(deadLetterMetadata({ ...letter, body: '{"traits":{}}' }), { ...letter, responseExcerpt: null, body: null });
  });
});
