import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonObjectFromFlags, parseJsonObject } from './json-options.js';
import { FlagError } from './webhook-options.js';

const isFlagError = (message: RegExp) => (e: unknown) => e instanceof FlagError && message.test(e.message);

describe('parseJsonObject', () => {
  it('parses an object, ignoring a byte order mark and surrounding whitespace', () => {
    assert.deepEqual(parseJsonObject('\uFEFF {"a": [1, {"b": null}]}\n', '--x'), { a: [1, { b: null }] });
  });

  it('refuses text that is not JSON, naming where it came from', () => {
    for (const text of ['', '{', "{'a': 1}", '{"a": 1,}']) {
      assert.throws(() => parseJsonObject(text, '--condition-file c.json'), isFlagError(/^--condition-file c\.json is not valid JSON: /));
    }
  });

  it('refuses JSON that is not an object', () => {
    for (const text of ['[]', 'null', '1', '"s"', 'true']) assert.throws(() => parseJsonObject(text, '--definition'), isFlagError(/^--definition must be a JSON object/));
  });
});

describe('jsonObjectFromFlags', () => {
  const files: Record<string, string> = { 'c.json': '{"trait": "plan", "op": "exists"}', 'bad.json': '{"trait":' };
  const read = async (path: string): Promise<string> => {
    const text = files[path];
    if (text === undefined) throw new Error(`ENOENT: no such file or directory, open '${path}'`);
    return text;
  };

  it('takes the inline text or the file, and nothing when neither is given', async () => {
    assert.deepEqual(await jsonObjectFromFlags('condition', { inline: '{"not": {}}' }, read), { not: {} });
    assert.deepEqual(await jsonObjectFromFlags('condition', { file: 'c.json' }, read), { trait: 'plan', op: 'exists' });
    assert.equal(await jsonObjectFromFlags('condition', {}, read), undefined);
  });

  it('refuses both at once, a file it cannot read and a file that is not JSON', async () => {
    await assert.rejects(jsonObjectFromFlags('condition', { inline: '{}', file: 'c.json' }, read), isFlagError(/^--condition and --condition-file: give one or the other$/));
    await assert.rejects(jsonObjectFromFlags('definition', { file: 'nope.json' }, read), isFlagError(/^cannot read --definition-file nope\.json: ENOENT/));
    await assert.rejects(jsonObjectFromFlags('condition', { file: 'bad.json' }, read), isFlagError(/^--condition-file bad\.json is not valid JSON: /));
  });
});
