import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newDestinationId, newSourceId, newWriteKey } from './ids.js';

describe('ids', () => {
  it('write keys carry 256 random bits, URL-safe, and never start with "-" (a CLI would read an option)', () => {
    const keys = Array.from({ length: 2000 }, newWriteKey);
    for (const key of keys) {
      assert.match(key, /^wk_[A-Za-z0-9_-]{43}$/);
    }
    assert.equal(new Set(keys).size, keys.length);
  });

  it('source and destination ids have their kind prefix', () => {
    assert.match(newSourceId(), /^src_[0-9a-f]{20}$/);
    assert.match(newDestinationId(), /^dst_[0-9a-f]{20}$/);
  });
});
