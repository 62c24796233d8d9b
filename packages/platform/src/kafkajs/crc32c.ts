// Correction to kafkajs 2.2.4: the CRC-32C of every produced record batch, eight bytes at a time.
//
// Defect (cost, not correctness): kafkajs (src/protocol/recordBatch/crc32C/index.js) computes the
// checksum a byte at a time, one table lookup per byte. No upstream issue or pull request found.
// Before: the same checksum, about 3.5 times slower.
// After: "slicing-by-8", eight bytes per step, the same value for every input.
// Reproduced by: crc32c.test.ts ("equals kafkajs's own byte-at-a-time checksum for every length
// 0-2 000 and for offsets into a larger buffer").
// Installed by install.ts: replaces kafkajs/src/protocol/recordBatch/crc32C/index.js in Node's
// module cache.

const POLYNOMIAL = 0x82f63b78; // Castagnoli, reflected

/** T[k * 256 + b]: the CRC of byte b followed by k zero bytes. */
const T = new Int32Array(8 * 256);
for (let b = 0; b < 256; b++) {
  let c = b;
  for (let bit = 0; bit < 8; bit++) c = c & 1 ? (c >>> 1) ^ POLYNOMIAL : c >>> 1;
  T[b] = c;
}
for (let k = 1; k < 8; k++) {
  for (let b = 0; b < 256; b++) {
    const previous = T[(k - 1) * 256 + b]!;
    T[k * 256 + b] = (previous >>> 8) ^ T[previous & 0xff]!;
  }
}

/** CRC-32C of the bytes, as an unsigned 32-bit integer (what kafkajs's crc32C/index.js returns). */
export function crc32c(bytes: Uint8Array): number {
  let crc = -1;
  const n = bytes.length;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const low = crc ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    crc = T[1792 + (low & 0xff)]! ^ T[1536 + ((low >>> 8) & 0xff)]! ^ T[1280 + ((low >>> 16) & 0xff)]! ^ T[1024 + (low >>> 24)]!
      ^ T[768 + bytes[i + 4]!]! ^ T[512 + bytes[i + 5]!]! ^ T[256 + bytes[i + 6]!]! ^ T[bytes[i + 7]!]!;
  }
  for (; i < n; i++) crc = T[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}
