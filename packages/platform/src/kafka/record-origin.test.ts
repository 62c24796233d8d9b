import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ORIGIN_HEADER, originHeaders, writtenBySwitchyard } from './record-origin.js';

describe('record origin: telling records Switchyard wrote from direct records', () => {
  it('records ingest, control and audiences wrote (headers as kafkajs reads them: Buffers)', () => {
    for (const origin of ['ingest', 'control', 'audiences'] as const) {
      const [name, value] = Object.entries(originHeaders[origin])[0]!;
      assert.equal(name, ORIGIN_HEADER);
      assert.ok(writtenBySwitchyard({ [name]: Buffer.from(value) }), origin);
      assert.ok(writtenBySwitchyard({ [name]: value }), `${origin} as a string`);
      assert.ok(writtenBySwitchyard({ other: Buffer.from('x'), [name]: [Buffer.from(value)] }), `${origin} repeated`);
    }
  });

  it('anything else is a direct record: no headers, other headers, an unknown or empty origin', () => {
    for (const headers of [undefined, {}, { 'content-type': Buffer.from('avro') }, { [ORIGIN_HEADER]: Buffer.from('someone') }, { [ORIGIN_HEADER]: Buffer.alloc(0) }, { [ORIGIN_HEADER]: [] }, { [ORIGIN_HEADER]: Buffer.from('Ingest') }]) {
      assert.equal(writtenBySwitchyard(headers), false, JSON.stringify(headers));
    }
  });

  it('the shared header objects cannot be changed by a caller', () => {
    assert.throws(() => { (originHeaders.ingest as Record<string, string>)[ORIGIN_HEADER] = 'x'; });
  });
});
