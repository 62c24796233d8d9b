import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { batchBody, bodyBytes, ENVELOPE_BYTES, MAX_BODY_BYTES, splitIntoBatches } from './batch-body.js';
import { LIBRARY_NAME, LIBRARY_VERSION } from './version.js';

const entry = (json: string) => ({ json, bytes: Buffer.byteLength(json) });

describe('batchBody', () => {
  it('wraps the messages with sentAt and the library context at batch level', () => {
    const body = JSON.parse(batchBody(['{"a":1}', '{"b":"é"}'], new Date('2025-01-01T00:00:00Z'))) as unknown;
    assert.deepEqual(body, { batch: [{ a: 1 }, { b: 'é' }], sentAt: '2025-01-01T00:00:00.000Z', context: { library: { name: LIBRARY_NAME, version: LIBRARY_VERSION } } });
  });

  it('computes body sizes exactly, multi-byte characters included', () => {
    const jsons = ['{"x":"€€€"}', '{"y":1}', '{"z":"😀"}'];
    assert.equal(bodyBytes(jsons.map((j) => Buffer.byteLength(j))), Buffer.byteLength(batchBody(jsons, new Date())));
    assert.equal(bodyBytes([]), ENVELOPE_BYTES);
  });
});

describe('splitIntoBatches', () => {
  it('keeps everything in one batch when it fits', () => {
    const entries = ['{"i":1}', '{"i":2}'].map(entry);
    assert.deepEqual(splitIntoBatches(entries), [entries]);
    assert.deepEqual(splitIntoBatches([]), []);
  });

  it('splits in order so that no body exceeds the limit, filling each batch as far as it goes', () => {
    const entries = Array.from({ length: 50 }, (_, i) => entry(JSON.stringify({ i, pad: 'x'.repeat(30_000 + i * 7) })));
    const batches = splitIntoBatches(entries);
    assert.deepEqual(batches.flat(), entries);
    for (const [n, batch] of batches.entries()) {
      const size = Buffer.byteLength(batchBody(batch.map((e) => e.json), new Date()));
      assert.ok(size <= MAX_BODY_BYTES, `batch ${n} is ${size} bytes`);
      const next = batches[n + 1]?.[0];
      if (next) assert.ok(size + 1 + next.bytes > MAX_BODY_BYTES, `batch ${n} could have taken one more message`);
    }
  });

  it('is exact at the boundary', () => {
    const max = ENVELOPE_BYTES + 10 + 1 + 10;
    const ten = entry('"12345678"');
    assert.equal(ten.bytes, 10);
    assert.equal(splitIntoBatches([ten, ten], max).length, 1);
    assert.equal(splitIntoBatches([ten, ten], max - 1).length, 2);
  });
});
