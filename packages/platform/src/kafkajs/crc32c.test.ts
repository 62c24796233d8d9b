import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { crc32c } from './crc32c.js';

const require = createRequire(import.meta.url);

describe('crc32c, eight bytes at a time', () => {
  it('the standard check value: CRC-32C("123456789") = 0xE3069283', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283);
    assert.equal(crc32c(Buffer.alloc(0)), 0);
  });

  it("equals kafkajs's own byte-at-a-time checksum for every length 0-2 000 and for offsets into a larger buffer", () => {
    const theirs = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as (buffer: Buffer) => number;
    const big = randomBytes(4096);
    for (let n = 0; n <= 2000; n++) {
      const bytes = randomBytes(n);
      assert.equal(crc32c(bytes), theirs(bytes), `length ${n}`);
      const view = big.subarray(n % 7, (n % 7) + n);
      assert.equal(crc32c(view), theirs(view), `a view of length ${n}`);
    }
  });
});
