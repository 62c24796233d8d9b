import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FlagError, parseHeaders, parseWebhooksJson, webhooksFromFlags } from './webhook-options.js';

describe('parseHeaders', () => {
  it('splits at the first colon and trims', () => {
    assert.deepEqual(parseHeaders(['Authorization: Bearer a:b', 'X-Empty:']), { Authorization: 'Bearer a:b', 'X-Empty': '' });
  });

  it('rejects a flag without a name, without quoting it', () => {
    for (const flag of ['no colon secret', ': secret', 'Two Words: secret']) {
      assert.throws(() => parseHeaders([flag]), (e: unknown) => e instanceof FlagError && !e.message.includes('secret'));
    }
  });
});

describe('parseWebhooksJson', () => {
  it('accepts an array of {url, headers?}', () => {
    assert.deepEqual(parseWebhooksJson('[{"url":"https://a","headers":{"A":"1"}},{"url":"https://b"}]'), [
      { url: 'https://a', headers: { A: '1' } },
      { url: 'https://b' },
    ]);
  });

  it('names the bad element', () => {
    assert.throws(() => parseWebhooksJson('[{"url":"https://a"},{"url":"https://b","headers":{"A":1}}]'), /\[1\]\.headers/);
    assert.throws(() => parseWebhooksJson('[null]'), /\[0\] needs a string "url"/);
  });
});

describe('webhooksFromFlags', () => {
  it('is undefined when no webhook flag was given', () => {
    assert.equal(webhooksFromFlags({}), undefined);
  });

  it('gives each URL its own copy of the headers', () => {
    const hooks = webhooksFromFlags({ url: ['https://a', 'https://b'], header: ['A: 1'] });
    assert.deepEqual(hooks, [{ url: 'https://a', headers: { A: '1' } }, { url: 'https://b', headers: { A: '1' } }]);
    assert.notEqual(hooks?.[0]?.headers, hooks?.[1]?.headers);
  });
});
