import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ComputedTrait, DeadLetter } from './admin-client.js';
import { block, computedTraitBlock, computedTraitTable, deadLetterTable, deletionLine, indentJson, printable, table } from './format.js';

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

describe('indentJson', () => {
  it('lays JSON out like JSON.stringify(v, null, 2)', () => {
    const value = { a: [1, { b: 'x, y: {z}' }, [], {}], c: null, d: { e: true } };
    assert.equal(indentJson(JSON.stringify(value)), JSON.stringify(value, null, 2));
    assert.equal(indentJson(' [ ] '), '[]');
    assert.equal(indentJson('"s"'), '"s"');
  });

  it('keeps numbers and string escapes as written', () => {
    assert.equal(indentJson('{"n":1e400,"big":12345678901234567890,"s":"\\u00e9\\\\\\""}'), '{\n  "n": 1e400,\n  "big": 12345678901234567890,\n  "s": "\\u00e9\\\\\\""\n}');
  });

  it('returns text that is not JSON as it is', () => {
    assert.equal(indentJson('{"a":'), '{"a":');
    assert.equal(indentJson(''), '');
  });
});

describe('printable', () => {
  it('escapes control characters but newline and tab', () => {
    assert.equal(printable('a\u001b[2Jb\tc\nd\re\u009bf\u007f'), 'a\\u001b[2Jb\tc\nd\\u000de\\u009bf\\u007f');
  });
});

describe('deadLetterTable', () => {
  it('says how many of how many, in the singular for one', () => {
    const d: DeadLetter = {
      id: 'dl_1', reason: 'r', status: 500, responseExcerpt: null, error: null, failedAt: 't', destinationId: 'dst_1',
      sourceId: 'src_1', messageId: 'm', eventType: 'track', attempts: 3, replayedAt: null,
    };
    assert.equal(deadLetterTable({ deadLetters: [d], total: 1 }).split('\n').at(-2), '1 of 1 dead letter');
  });
});

describe('deletionLine', () => {
  it('names the sources it notified', () => {
    assert.equal(deletionLine({ requestId: 'del_1', userId: 'u', notifications: 3, sourceIds: ['a', 'b', 'c'] }), 'deletion del_1: 3 notifications for sources a, b, c\n');
  });
});

describe('computed traits', () => {
  it('show "-" for a definition without a string kind', () => {
    const t: ComputedTrait = { id: 'ct_1', sourceId: 'src_1', name: 'n', trait: 'n', definition: { kind: 7 }, createdAt: 'c', updatedAt: 'u' };
    assert.equal(computedTraitTable([t]), 'ID    SOURCE  NAME  TRAIT  KIND\nct_1  src_1   n     n      -\n');
    assert.match(computedTraitBlock(t), /^kind: +-$/m);
    assert.match(computedTraitBlock(t), /\ndefinition:\n\{\n {2}"kind": 7\n\}\n$/);
  });
});
