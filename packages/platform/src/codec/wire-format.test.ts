import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CodecError } from '../errors.js';
import { frame, readFrame } from './wire-format.js';

describe('Confluent wire format', () => {
  it('frames a body behind magic byte 0 and a big-endian schema id', () => {
    const framed = frame(0x01020304, Buffer.from([9, 8]));
    assert.deepEqual([...framed], [0, 1, 2, 3, 4, 9, 8]);
    assert.deepEqual(readFrame(framed), { schemaId: 0x01020304, body: Buffer.from([9, 8]) });
  });

  it('refuses values too short for the header, null values and a wrong magic byte', () => {
    for (const bad of [Buffer.alloc(0), Buffer.from([0, 0, 0, 1]), null, Buffer.from('{"json":true}')]) {
      assert.throws(() => readFrame(bad), (e: unknown) => e instanceof CodecError && e.code === 'CODEC_BAD_FRAME');
    }
  });
});
