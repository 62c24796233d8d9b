import assert from 'node:assert/strict';
import { deflateSync, gzipSync } from 'node:zlib';
import { describe, it } from 'node:test';
import type { HttpError } from '@switchyard/platform/http/error-catalogue';
import { decodeBody, parseJsonBody, writeKeyOf } from './request-body.js';

const code = (fn: () => unknown) => { try { fn(); } catch (e) { return (e as HttpError).code; } return undefined; };
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('request bodies', () => {
  it('decodes gzip and deflate, passes identity through, refuses unknown encodings and bombs', async () => {
    const text = Buffer.from('{"batch":[]}');
    assert.deepEqual(await decodeBody(gzipSync(text), 'gzip'), text);
    assert.deepEqual(await decodeBody(deflateSync(text), 'Deflate'), text);
    assert.deepEqual(await decodeBody(text, undefined), text);
    await assert.rejects(decodeBody(text, 'compress'), (e: HttpError) => e.code === 'UNSUPPORTED_ENCODING');
    await assert.rejects(decodeBody(text, 'gzip'), (e: HttpError) => e.code === 'INVALID_ENCODING');
    await assert.rejects(decodeBody(gzipSync(Buffer.alloc(20 * 1024 * 1024)), 'gzip'), (e: HttpError) => e.code === 'BODY_TOO_LARGE');
  });

  it('parses JSON, dropping __proto__ and constructor.prototype, refusing deep nesting', () => {
    const parsed = parseJsonBody(Buffer.from('{"a":{"__proto__":{"x":1},"b":2},"constructor":{"prototype":{"y":1}}}')) as Record<string, unknown>;
    assert.deepEqual(parsed.a, { b: 2 });
    assert.ok(!JSON.stringify(parsed).includes('prototype'));
    assert.equal(({} as Record<string, unknown>).x, undefined);
    assert.equal(code(() => parseJsonBody(Buffer.from('{"a":'))), 'INVALID_JSON');
    assert.equal(code(() => parseJsonBody(Buffer.from(`${'['.repeat(65)}${']'.repeat(65)}`))), 'NESTING_TOO_DEEP');
    assert.equal(code(() => parseJsonBody(Buffer.from(`${'['.repeat(64)}${']'.repeat(64)}`))), undefined);
  });

  it('refuses bytes that are not UTF-8 instead of replacing them, and skips a BOM', () => {
    const around = (bytes: number[]) => Buffer.concat([Buffer.from('{"s":"'), Buffer.from(bytes), Buffer.from('"}')]);
    for (const bad of [[0xff], [0xc0, 0xaf], [0x80], [0xed, 0xa0, 0x80], [0xe6, 0x97], [0xf8, 0x88, 0x80, 0x80, 0x80]]) {
      assert.equal(code(() => parseJsonBody(around(bad))), 'INVALID_UTF8', JSON.stringify(bad));
    }
    assert.equal(code(() => parseJsonBody(Buffer.from([0xff, 0xfe, 0x7b]))), 'INVALID_UTF8');
    assert.deepEqual(parseJsonBody(around([0xe6, 0x97, 0xa5])), { s: '日' });
    assert.deepEqual(parseJsonBody(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')])), { a: 1 });
  });

  it('finds the write key in Basic auth (with or without the colon) or the body', () => {
    assert.equal(writeKeyOf(`Basic ${b64('wk:')}`, {}), 'wk');
    assert.equal(writeKeyOf(`basic ${b64('wk')}`, {}), 'wk');
    assert.equal(writeKeyOf(`Basic ${b64('wk:ignored')}`, {}), 'wk');
    assert.equal(writeKeyOf(undefined, { writeKey: 'body-key' }), 'body-key');
    assert.equal(writeKeyOf(`Basic ${b64(':')}`, { writeKey: 'body-key' }), 'body-key');
    assert.equal(writeKeyOf('Bearer x', {}), undefined);
    assert.equal(writeKeyOf(undefined, { writeKey: 42 }), undefined);
  });
});
