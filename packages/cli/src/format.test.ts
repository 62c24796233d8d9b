import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { block, table } from './format.js';

describe('table', () => {
  it('pads every column but the last to its widest cell', () => {
    assert.equal(table(['A', 'LONGER'], [['wide-cell', 'x'], ['b', '']]), 'A          LONGER\nwide-cell  x\nb\n');
  });

  it('prints just the header for no rows', () => {
    assert.equal(table(['ID', 'NAME'], []), 'ID  NAME\n');
  });
});

describe('block', () => {
  it('aligns values and continues multi-value fields on indented lines', () => {
    assert.equal(block([['id', '1'], ['keys', ['a', 'b']], ['none', []]]), 'id:   1\nkeys: a\n      b\nnone: (none)\n');
  });
});
