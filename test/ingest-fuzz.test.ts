// Ingest fuzzing against the real service: hundreds of generated calls and bodies (fast-check,
// fixed seed) plus hand-written nasties. Every request must get a 2xx or 4xx with a JSON body
// naming the problem, never a 5xx, a hang or a dropped socket; the process stays up with bounded
// memory; and the ingest topic holds exactly the calls that were accepted (by messageId): a refused
// request wrote nothing, an accepted batch wrote every call it did not list as rejected, and each
// rejected call is on the invalid-events topic.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { brotliCompressSync, constants as zlibConstants, deflateSync, gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { requestJson } from './support/http.js';
import { newSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';
import { TopicReader } from './support/topic-reader.js';

type Json = Record<string, unknown>;
type Rec = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- decoded records and response bodies

const SEED = 20240611;
const GENERATED_REQUESTS = 600;
const CONCURRENCY = 8;
const REQUEST_TIMEOUT_MS = 15_000;
const TYPES = ['identify', 'track', 'page', 'screen', 'group', 'alias'] as const;
type CallType = (typeof TYPES)[number];
const SHORT: Record<CallType, string> = { identify: 'i', track: 't', page: 'p', screen: 's', group: 'g', alias: 'a' };

interface Sent {
  label: string;
  path: string;
  body: Buffer;
  headers?: Record<string, string>;
  /** Send as chunked (no Content-Length). */
  chunked?: boolean;
  /**
   * The calls as the server will see them if it parses the body: a single call for a single-call
   * path, the batch's calls for a batch path. Undefined when the body cannot parse to calls.
   */
  calls?: unknown[];
  /** Expected status class or exact status; checked in addition to the general rules. */
  expect?: { status?: number; code?: string; rejectedIndexes?: number[] };
}

interface Answer { label: string; status: number; json: Rec | undefined; text: string; error?: string }

/** POST raw bytes with node:http; a timeout, a socket error before a response, or a non-JSON body are reported, not thrown. */
function send(base: string, s: Sent): Promise<Answer> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (a: Omit<Answer, 'label'>) => { if (!done) { done = true; clearTimeout(timer); resolve({ label: s.label, ...a }); } };
    const headers = { ...s.headers, ...(s.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(s.body.length) }) };
    const req = request(`${base}${s.path}`, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (d: Buffer) => chunks.push(d));
      res.on('error', (err) => finish({ status: res.statusCode ?? 0, json: undefined, text: '', error: `response: ${err.message}` }));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: Rec | undefined;
        try { json = JSON.parse(text) as Rec; } catch { json = undefined; }
        finish({ status: res.statusCode ?? 0, json, text });
      });
    });
    const timer = setTimeout(() => { req.destroy(); finish({ status: 0, json: undefined, text: '', error: 'no answer (hang)' }); }, REQUEST_TIMEOUT_MS);
    // A write error after the answer arrived is the server closing an over-limit upload: the answer stands.
    req.on('error', (err) => setTimeout(() => finish({ status: 0, json: undefined, text: '', error: `socket: ${(err as NodeJS.ErrnoException).code ?? err.message}` }), 200));
    if (s.chunked) {
      for (let i = 0; i < s.body.length; i += 64 * 1024) req.write(s.body.subarray(i, i + 64 * 1024));
      req.end();
    } else req.end(s.body);
  });
}

async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: limit }, async () => {
    while (next < items.length) { const i = next++; results[i] = await fn(items[i]!); }
  }));
  return results;
}

/** process_resident_memory_bytes from a service's /metrics. */
async function rss(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^process_resident_memory_bytes(?:\{[^}]*\})? (\d+(?:\.\d+)?(?:e\+\d+)?)$/m.exec(text);
  assert.ok(m, 'process_resident_memory_bytes is exported');
  return Number(m[1]);
}

/** The messageId the server keeps for a call it accepts: a string as is, a finite number as text, else generated. */
function keptMessageId(call: unknown): string | undefined {
  const v = (call as Json).messageId;
  if (typeof v === 'string' && v !== '') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return undefined;
}

/** The items of `a` left after removing one occurrence per item of `b`. */
function multisetMinus(a: string[], b: string[]): string[] {
  const counts = new Map<string, number>();
  for (const x of b) counts.set(x, (counts.get(x) ?? 0) + 1);
  return a.filter((x) => { const n = counts.get(x) ?? 0; if (n > 0) { counts.set(x, n - 1); return false; } return true; });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('ingest fuzzing: hostile and generated input against the real service', () => {
  const prefix = uniquePrefix('fuzz');
  const topics = topicNames(prefix);
  const token = newSecret('fuzz admin token', 'adm-');
  const run = randomUUID().slice(0, 8);
  let seq = 0;
  const mid = () => `fz-${run}-${seq++}`;
  let control: RunningService;
  let ingest: RunningService;
  let reader: TopicReader;
  let writeKey: string;
  let basic: string;
  const answers: Array<{ sent: Sent; answer: Answer }> = [];
  let rssBefore = 0;

  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const auth = () => ({ authorization: basic, 'content-type': 'application/json' });
  const track = (extra: Json = {}) => ({ type: 'track', userId: `u-${run}`, event: 'Fuzzed', messageId: mid(), ...extra });

  /** Sends and records: the final accounting needs every request's answer. */
  const fire = async (sents: Sent[], concurrency = CONCURRENCY) => {
    const got = await pool(sents, concurrency, (s) => send(ingest.url, s));
    sents.forEach((sent, i) => answers.push({ sent, answer: got[i]! }));
    return got;
  };

  before(async () => {
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, LOG_LEVEL: 'warn' });
    await setupTopics(env);
    control = await startService('control', env);
    const created = await requestJson('POST', `${control.url}/v1/sources`, { token, body: { name: 'Fuzz source' } });
    assert.equal(created.status, 201, created.text);
    writeKey = created.body.writeKeys[0];
    basic = `Basic ${Buffer.from(`${writeKey}:`).toString('base64')}`;
    ingest = await startService('ingest', env);
    reader = await new TopicReader([topics.ingest, topics.invalidEvents]).start();
    rssBefore = await rss(ingest.url);
  });
  after(async () => {
    await reader?.stop();
    await ingest?.stop();
    await control?.stop();
  });

  it('malformed, truncated and empty bodies, wrong content types and encodings: 4xx naming the problem', async () => {
    const valid = json({ batch: [track(), track()] });
    const raw = (label: string, body: Buffer | string, expect?: Sent['expect'], headers: Record<string, string> = auth()): Sent =>
      ({ label, path: '/v1/batch', body: Buffer.isBuffer(body) ? body : Buffer.from(body), headers, expect });
    const sents: Sent[] = [
      ...['', ' ', '{', '}', '{"batch":[', '{"batch":[{"type":"track",}]}', "{'batch':[]}", '{"batch":[]}{"batch":[]}', 'NaN', '{"batch":[1,2,]}', '\u0000', '{"a":1e999999}x']
        .map((b, i) => raw(`malformed #${i}`, b, { status: 400, code: 'INVALID_JSON' })),
      ...['null', '[]', '"text"', '123', 'true', '[{"type":"track"}]'].map((b) => raw(`not an object: ${b}`, b, { status: 400, code: 'INVALID_BODY' })),
      ...[1, 10, Math.floor(valid.length / 2), valid.length - 1].map((n) => raw(`truncated at ${n}`, valid.subarray(0, n), { status: 400, code: 'INVALID_JSON' })),
      ...['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/octet-stream', 'image/png', '']
        .map((ct) => raw(`empty body as ${ct || 'no content type'}`, '', { status: 400, code: 'INVALID_JSON' }, { authorization: basic, ...(ct ? { 'content-type': ct } : {}) })),
      // The body is JSON whatever the Content-Type says (browsers send text/plain).
      ...['text/plain', 'application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'application/json; charset=utf-16', 'nonsense']
        .map((ct) => { const calls = [track()]; return { label: `valid JSON as ${ct}`, path: '/v1/batch', body: json({ batch: calls }), headers: { authorization: basic, 'content-type': ct }, calls, expect: { status: 200 } }; }),
      raw('batch is an object', json({ batch: { 0: track() } }), { status: 400, code: 'INVALID_BATCH' }),
      raw('batch is a string', json({ batch: 'track' }), { status: 400, code: 'INVALID_BATCH' }),
      raw('batch missing', json({ calls: [track()] }), { status: 400, code: 'INVALID_BATCH' }),
      raw('batch context is a string', json({ batch: [track()], context: 'ctx' }), { status: 400, code: 'INVALID_BATCH' }),
      raw('batch integrations is an array', json({ batch: [track()], integrations: [] }), { status: 400, code: 'INVALID_BATCH' }),
      raw('no write key', json({ batch: [track()] }), { status: 401, code: 'MISSING_WRITE_KEY' }, { 'content-type': 'application/json' }),
      raw('wrong write key', json({ batch: [track()] }), { status: 401, code: 'INVALID_WRITE_KEY' }, { authorization: `Basic ${Buffer.from('not-a-key-at-all:').toString('base64')}` }),
      raw('write key of the wrong type in the body', json({ writeKey: 42, batch: [track()] }), { status: 401, code: 'MISSING_WRITE_KEY' }, {}),
      raw('Basic auth that is not base64', json({ batch: [track()] }), { status: 401 }, { authorization: 'Basic %%%***' }),
      raw('Bearer instead of Basic', json({ batch: [track()] }), { status: 401 }, { authorization: `Bearer ${writeKey}` }),
      // Content-Encoding.
      ...['compress', 'zstd', 'gzip, gzip', 'x-unknown', 'identity;q=0'].map((enc) => raw(`Content-Encoding ${enc}`, gzipSync(valid), { status: 400, code: 'UNSUPPORTED_ENCODING' }, { ...auth(), 'content-encoding': enc })),
      ...['gzip', 'deflate', 'br', 'x-gzip'].map((enc) => raw(`${enc} header, plain body`, valid, { status: 400, code: 'INVALID_ENCODING' }, { ...auth(), 'content-encoding': enc })),
      raw('gzip header, truncated gzip body', gzipSync(valid).subarray(0, 20), { status: 400, code: 'INVALID_ENCODING' }, { ...auth(), 'content-encoding': 'gzip' }),
      raw('gzip inside gzip, one layer declared', gzipSync(gzipSync(valid)), { status: 400, code: 'INVALID_UTF8' }, { ...auth(), 'content-encoding': 'gzip' }),
      raw('deflate body declared gzip', deflateSync(valid), { status: 400, code: 'INVALID_ENCODING' }, { ...auth(), 'content-encoding': 'gzip' }),
      ...(['GZIP', 'gzip', 'deflate', 'br', 'identity', ''] as const).map((enc) => {
        const calls = [track(), track()];
        const body = json({ batch: calls });
        const coded = enc.toLowerCase() === 'gzip' ? gzipSync(body) : enc === 'deflate' ? deflateSync(body) : enc === 'br' ? brotliCompressSync(body) : body;
        return { label: `valid body, Content-Encoding ${enc || '(empty)'}`, path: '/v1/batch', body: coded, headers: { ...auth(), 'content-encoding': enc }, calls, expect: { status: 200 } };
      }),
    ];
    const got = await fire(sents);
    for (const [i, a] of got.entries()) checkAnswer(sents[i]!, a);
  });

  it('wrong types in every field of every call type, alone and in a batch', async () => {
    const fields: Record<CallType, string[]> = {
      identify: ['traits'], track: ['event', 'properties'], page: ['name', 'category', 'properties'], screen: ['name', 'category', 'properties'],
      group: ['groupId', 'traits'], alias: ['previousId'],
    };
    const common = ['type', 'userId', 'anonymousId', 'messageId', 'timestamp', 'originalTimestamp', 'sentAt', 'context', 'integrations'];
    const wrong: unknown[] = [{ nested: { a: [1] } }, [1, 'two'], true, false, 3.5, -0, 'text', 2 ** 53 + 2, 1e21, Number.MAX_VALUE];
    const base = (type: CallType): Json => ({
      type, userId: `u-${run}`, anonymousId: `a-${run}`, event: 'E', name: 'N', category: 'C', groupId: 'g', previousId: 'p',
      properties: { a: 1 }, traits: { b: 2 }, context: { c: 3 }, integrations: { All: true },
    });
    const singles: Sent[] = [];
    const batchCalls: Json[] = [];
    for (const type of TYPES) {
      for (const field of [...common, ...fields[type]]) {
        for (const value of wrong) {
          const call = { ...base(type), [field]: value, messageId: field === 'messageId' ? value : mid() };
          batchCalls.push(call);
          // The path decides the type of a single call, so a wrong `type` matters in batches only.
          if (field !== 'type') singles.push({ label: `${type}.${field} = ${JSON.stringify(value)}`, path: `/v1/${Math.random() < 0.5 ? type : SHORT[type]}`, body: json(call), headers: auth(), calls: [call] });
        }
      }
    }
    const got = await fire([...singles, { label: 'batch of every wrong type', path: '/v1/batch', body: json({ batch: batchCalls }), headers: auth(), calls: batchCalls }]);
    for (const [i, a] of got.entries()) checkAnswer(i < singles.length ? singles[i]! : answers.at(-1)!.sent, a);
    // Object, array and boolean values are never taken for a string, a time or an object of the wrong kind.
    const objectLike = (v: unknown) => typeof v === 'object' || typeof v === 'boolean';
    for (const [i, a] of got.slice(0, singles.length).entries()) {
      const call = singles[i]!.calls![0] as Json;
      const [, field] = /\.(\w+) =/.exec(singles[i]!.label)!;
      const used = [...common, ...fields[call.type as CallType]].includes(field!);
      if (used && field !== 'type' && objectLike(call[field!]) && !['context', 'integrations', 'properties', 'traits'].includes(field!)) {
        assert.equal(a.status, 400, `${singles[i]!.label}: ${a.text}`);
      }
      if (['context', 'integrations', 'properties', 'traits'].includes(field!) && used && (Array.isArray(call[field!]) || typeof call[field!] !== 'object')) {
        assert.equal(a.status, 400, `${singles[i]!.label}: ${a.text}`);
      }
    }
    const inputs = singles.length + batchCalls.length;
    console.log(`# wrong-type inputs: ${singles.length} single calls and one batch of ${batchCalls.length} (${inputs} calls)`);
  });

  it('deep nesting, huge strings and arrays, bodies over the limit, gzip bombs', async () => {
    const nest = (depth: number) => { let v: unknown = 'leaf'; for (let i = 0; i < depth; i++) v = { n: v }; return v; };
    const big = 'x'.repeat(40 * 1024);
    const okBatch = Array.from({ length: 1500 }, () => track({ properties: { i: 1 } }));
    const mixed = [track(), track({ properties: { big } }), track()];
    const bomb = gzipSync(Buffer.alloc(30 * 1024 * 1024, 0x20), { level: 9 });
    const jsonBomb = gzipSync(Buffer.from(`{"batch":[${Array.from({ length: 12_000 }, () => JSON.stringify(track())).join(',')}]}`));
    const sents: Sent[] = [
      (() => { const call = track({ properties: nest(60) }); return { label: 'nesting 60 levels in properties', path: '/v1/track', body: json(call), headers: auth(), calls: [call], expect: { status: 200 } }; })(),
      { label: 'nesting 70 levels in properties', path: '/v1/track', body: json(track({ properties: nest(70) })), headers: auth(), expect: { status: 400, code: 'NESTING_TOO_DEEP' } },
      { label: '200k nested arrays', path: '/v1/batch', body: Buffer.from(`${'['.repeat(200_000)}${']'.repeat(200_000)}`), headers: auth(), expect: { status: 400 } },
      { label: '200k unbalanced open brackets', path: '/v1/batch', body: Buffer.from(`{"batch":${'['.repeat(250_000)}`), headers: auth(), expect: { status: 400 } },
      { label: '40 KB string in a single call', path: '/v1/track', body: json(track({ properties: { big } })), headers: auth(), expect: { status: 400, code: 'MESSAGE_TOO_LARGE' } },
      { label: '40 KB string in one call of a batch', path: '/v1/batch', body: json({ batch: mixed }), headers: auth(), calls: mixed, expect: { status: 200, rejectedIndexes: [1] } },
      { label: 'array of 20k numbers in properties', path: '/v1/track', body: json(track({ properties: { list: Array.from({ length: 20_000 }, (_, i) => i) } })), headers: auth(), expect: { status: 400, code: 'MESSAGE_TOO_LARGE' } },
      { label: 'batch of 1500 calls under the limit', path: '/v1/batch', body: json({ batch: okBatch }), headers: auth(), calls: okBatch, expect: { status: 200 } },
      { label: '600 KB body with Content-Length', path: '/v1/batch', body: json({ batch: Array.from({ length: 6000 }, () => track()) }), headers: auth(), expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: '2 MB chunked body', path: '/v1/batch', body: Buffer.from(`{"batch":[${'1,'.repeat(1024 * 1024)}1]}`), headers: auth(), chunked: true, expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: 'huge single string over the limit', path: '/v1/track', body: json(track({ properties: { s: 'y'.repeat(700 * 1024) } })), headers: auth(), expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: `gzip bomb (${bomb.length} B → 30 MB)`, path: '/v1/batch', body: bomb, headers: { ...auth(), 'content-encoding': 'gzip' }, expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: 'deflate bomb', path: '/v1/batch', body: deflateSync(Buffer.alloc(30 * 1024 * 1024, 0x20), { level: 9 }), headers: { ...auth(), 'content-encoding': 'deflate' }, expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: 'brotli bomb', path: '/v1/batch', body: brotliCompressSync(Buffer.alloc(30 * 1024 * 1024, 0x20), { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 4 } }), headers: { ...auth(), 'content-encoding': 'br' }, expect: { status: 400, code: 'BODY_TOO_LARGE' } },
      { label: 'gzip of valid JSON that inflates past 500 KB', path: '/v1/batch', body: jsonBomb, headers: { ...auth(), 'content-encoding': 'gzip' }, expect: { status: 400, code: 'BODY_TOO_LARGE' } },
    ];
    // Batches near the limit at once, all for one user (one partition): together they are over
    // the broker's 1 MB per record batch, yet each request was within its limits.
    const nearLimit: Sent[] = Array.from({ length: 8 }, (_, n) => {
      const calls = Array.from({ length: 14 }, () => track({ properties: { pad: 'z'.repeat(30 * 1024) } }));
      return { label: `near-limit batch ${n}`, path: '/v1/batch', body: json({ batch: calls }), headers: auth(), calls, expect: { status: 200 } };
    });
    // A small body that would write hundreds of megabytes: a 30 KB batch-level context merged into
    // each of thousands of tiny calls.
    const amplified = json({ context: { pad: 'c'.repeat(30 * 1024) }, batch: Array.from({ length: 12_000 }, () => ({ type: 'identify', userId: 'amp' })) });
    const tiny = json({ batch: Array.from({ length: 12_000 }, () => ({ type: 'identify', userId: 'tiny' })) });
    nearLimit.push(
      { label: `batch context × 12000 calls (${amplified.length} B body)`, path: '/v1/batch', body: amplified, headers: auth(), expect: { status: 400, code: 'REQUEST_TOO_LARGE' } },
      { label: `12000 tiny calls (${tiny.length} B body)`, path: '/v1/batch', body: tiny, headers: auth(), expect: { status: 400, code: 'REQUEST_TOO_LARGE' } },
    );
    const nearGot = await fire(nearLimit, 8);
    for (const [i, a] of nearGot.entries()) checkAnswer(nearLimit[i]!, a);
    // Several over-limit requests at once, too: the limit must hold under concurrency.
    const got = await fire([...sents, ...sents.filter((s) => /bomb|2 MB/.test(s.label)).map((s) => ({ ...s, label: `${s.label} (again)` }))], 4);
    for (const [i, a] of got.entries()) checkAnswer(answers[answers.length - got.length + i]!.sent, a);
  });

  it('invalid UTF-8, duplicate keys, numbers beyond 2^53, timestamps out of range', async () => {
    const withBytes = (label: string, bytes: number[]): Sent => {
      const id = mid();
      const text = JSON.stringify(track({ messageId: id, properties: { s: 'MARK' } }));
      const [head, tail] = text.split('MARK') as [string, string];
      return { label: `invalid UTF-8: ${label}`, path: '/v1/track', body: Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)]), headers: auth(), expect: { status: 400, code: 'INVALID_UTF8' } };
    };
    const dupId = [mid(), mid()];
    const timestamps: unknown[] = ['0000-01-01T00:00:00Z', '0999-12-31T23:59:59Z', '10000-01-01T00:00:00Z', '275760-09-13T00:00:00.000Z', '2020-13-01T00:00:00Z', '2020-02-30T00:00:00Z',
      '2020-01-01T24:00:00Z', '2020-01-01T00:00:00+19:00', 'now', 'yesterday', 1e16, 8.64e15 + 1, -8.64e15, 1e300, Number.MAX_SAFE_INTEGER, '1e3', ' '];
    const sents: Sent[] = [
      withBytes('0xff', [0xff]), withBytes('0xc0 0xaf (overlong)', [0xc0, 0xaf]), withBytes('lone continuation 0x80', [0x80]),
      withBytes('encoded surrogate 0xed 0xa0 0x80', [0xed, 0xa0, 0x80]), withBytes('cut multibyte 0xe6 0x97', [0xe6, 0x97]), withBytes('0xf8 (5-byte form)', [0xf8, 0x88, 0x80, 0x80, 0x80]),
      { label: 'invalid UTF-8 in a key', path: '/v1/batch', body: Buffer.concat([Buffer.from('{"batch":[],"'), Buffer.from([0xfe]), Buffer.from('":1}')]), headers: auth(), expect: { status: 400, code: 'INVALID_UTF8' } },
      ...(() => { const calls = [track({ properties: { s: '\ud800 lone surrogate escape' } })]; return [{ label: 'lone surrogate as a JSON escape (valid JSON)', path: '/v1/batch', body: json({ batch: calls }), headers: auth(), calls, expect: { status: 200 } }]; })(),
      ...(() => { const calls = [track({ properties: { s: 'ünïcødé 日本 🎉' } })]; return [{ label: 'valid UTF-8 with a BOM', path: '/v1/batch', body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), json({ batch: calls })]), headers: auth(), calls, expect: { status: 200 } }]; })(),
      {
        label: 'duplicate keys: the last one counts', path: '/v1/track', headers: auth(),
        body: Buffer.from(`{"userId":"first","event":"Dup","messageId":"${dupId[0]}","userId":"u-${run}","messageId":"${dupId[1]}"}`),
        calls: [{ type: 'track', userId: `u-${run}`, messageId: dupId[1] }], expect: { status: 200 },
      },
      { label: 'userId 2^53 + 1', path: '/v1/identify', body: Buffer.from(`{"userId":9007199254740993,"messageId":"${mid()}"}`), headers: auth(), expect: { status: 400, code: 'INVALID_FIELD' } },
      { label: 'anonymousId -2^60', path: '/v1/identify', body: Buffer.from(`{"anonymousId":-1152921504606846976,"messageId":"${mid()}"}`), headers: auth(), expect: { status: 400, code: 'INVALID_FIELD' } },
      { label: 'messageId 1e21', path: '/v1/identify', body: Buffer.from(`{"userId":"u-${run}","messageId":1e21}`), headers: auth(), expect: { status: 400, code: 'INVALID_FIELD' } },
      { label: 'groupId 2^64', path: '/v1/group', body: Buffer.from(`{"userId":"u-${run}","groupId":18446744073709551616,"messageId":"${mid()}"}`), headers: auth(), expect: { status: 400, code: 'INVALID_FIELD' } },
      { label: 'userId at 2^53 - 1 is exact', path: '/v1/identify', body: Buffer.from(`{"userId":9007199254740991,"messageId":"${dupId[0]}"}`), headers: auth(), calls: [{ messageId: dupId[0] }], expect: { status: 200 } },
      (() => { const calls = [track({ properties: { huge: 123456789012345678901234567890, tiny: 1e-320, neg: -9007199254740993 } })]; return { label: 'big numbers in properties', path: '/v1/batch', body: json({ batch: calls }), headers: auth(), calls, expect: { status: 200 } }; })(),
      ...timestamps.map((ts) => ({ label: `timestamp ${JSON.stringify(ts)}`, path: '/v1/track', body: json(track({ timestamp: ts })), headers: auth(), expect: { status: 400, code: 'INVALID_TIMESTAMP' } })),
      (() => { const calls = timestamps.map((ts) => track({ originalTimestamp: ts })); return { label: 'batch of out-of-range originalTimestamps', path: '/v1/batch', body: json({ batch: calls }), headers: auth(), calls, expect: { status: 200, rejectedIndexes: timestamps.map((_, i) => i) } }; })(),
      (() => { const calls = [track(), track()]; return { label: 'batch-level sentAt out of range', path: '/v1/batch', body: json({ batch: calls, sentAt: '99999-01-01T00:00:00Z' }), headers: auth(), calls, expect: { status: 200, rejectedIndexes: [0, 1] } }; })(),
    ];
    const got = await fire(sents);
    for (const [i, a] of got.entries()) checkAnswer(sents[i]!, a);
  });

  it('__proto__, constructor and prototype keys shape nothing, not even later requests', async () => {
    const pollute = { type: 'track', event: 'Polluted', userId: 'polluter', anonymousId: 'polluter', ip: '6.6.6.6', enabled: true };
    const calls = [track({ properties: { ok: 1 } })];
    const body = (extra: string) => Buffer.from(`{"batch":${JSON.stringify(calls)}${extra}}`);
    const attacks: Sent[] = [
      { label: '__proto__ at the top', path: '/v1/batch', body: body(`,"__proto__":${JSON.stringify(pollute)}`), headers: auth(), calls, expect: { status: 200 } },
      { label: 'constructor.prototype at the top', path: '/v1/batch', body: body(`,"constructor":{"prototype":${JSON.stringify(pollute)}}`), headers: auth(), calls, expect: { status: 200 } },
      { label: '__proto__ in batch context', path: '/v1/batch', body: body(`,"context":{"__proto__":${JSON.stringify(pollute)}}`), headers: auth(), calls, expect: { status: 200 } },
      ...(['__proto__', 'constructor', 'prototype'] as const).flatMap((key) => TYPES.map((type) => {
        const id = mid();
        const text = `{"userId":"u-${run}","anonymousId":"a","event":"E","groupId":"g","previousId":"p","messageId":"${id}","properties":{"${key}":${JSON.stringify(pollute)}},"traits":{"${key}":{"prototype":${JSON.stringify(pollute)}}},"context":{"${key}":${JSON.stringify(pollute)}},"${key}":${JSON.stringify(pollute)}}`;
        return { label: `${key} keys in a ${type} call`, path: `/v1/${type}`, body: Buffer.from(text), headers: auth(), calls: [{ messageId: id }], expect: { status: 200 } };
      })),
    ];
    const got = await fire(attacks);
    for (const [i, a] of got.entries()) checkAnswer(attacks[i]!, a);

    // Had any of that reached Object.prototype, these calls would have gained a type, an event or a user.
    const later = [{ messageId: mid(), userId: `u-${run}` }, { type: 'track', messageId: mid(), userId: `u-${run}` }, { type: 'identify', messageId: mid() }];
    const probes: Sent[] = [
      { label: 'after: a call without a type', path: '/v1/batch', body: json({ batch: later }), headers: auth(), calls: later, expect: { status: 200, rejectedIndexes: [0, 1, 2] } },
      { label: 'after: track without a user', path: '/v1/track', body: json({ event: 'E', messageId: mid() }), headers: auth(), expect: { status: 400, code: 'MISSING_USER_ID' } },
    ];
    const after = await fire(probes);
    for (const [i, a] of after.entries()) checkAnswer(probes[i]!, a);
    assert.deepEqual(after[0]!.json!.rejected.map((r: Rec) => r.reason), ['unknown_type', 'missing_event', 'missing_user_id']);

    // `__proto__` keys are dropped and so is `constructor` holding a `prototype`; a plain key named
    // `prototype` (or `constructor` without one) is just data.
    const ids = attacks.flatMap((s) => s.calls!.map(keptMessageId));
    const written = await reader.waitFor<Rec>(topics.ingest, (v) => ids.includes(v.messageId), ids.length);
    const keyOf = new Map(attacks.map((s) => [keptMessageId(s.calls![0]), s.label.split(' ')[0]]));
    for (const v of written) {
      const text = ['properties', 'traits', 'context', 'integrations'].map((f) => String(v[f] ?? '')).join(' ');
      assert.ok(!text.includes('__proto__') && !/"constructor":\{"prototype"/.test(text), `${v.messageId}: ${text}`);
      if (keyOf.get(v.messageId) === '__proto__' || keyOf.get(v.messageId) === 'constructor.prototype') assert.ok(!/Polluted|6\.6\.6\.6/.test(text), `${v.messageId}: ${text}`);
      assert.equal(v.userId, `u-${run}`);
      assert.equal(JSON.parse(v.context ?? '{}').ip ?? '127.0.0.1', '127.0.0.1');
    }
  });

  it(`${GENERATED_REQUESTS} generated requests (fast-check, seed ${SEED}): calls with fuzzed fields, batches, encodings, truncation`, async () => {
    const scalar = fc.oneof(
      fc.string({ maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null),
      fc.constantFrom(2 ** 53, 2 ** 53 + 2, -(2 ** 63), 1e21, 1e-7, Number.MAX_VALUE, Number.MIN_VALUE, '', ' ', '\u0000', '\ud800', '日本'),
    );
    const value = fc.oneof({ maxDepth: 3, depthSize: 'small' }, scalar, fc.array(scalar, { maxLength: 5 }), fc.dictionary(fc.string({ maxLength: 8 }), scalar, { maxKeys: 5 }),
      fc.constant({ __proto__: null, a: 1 }), fc.constant([]), fc.constant({}));
    const id = fc.oneof({ weight: 6, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }, { weight: 1, arbitrary: fc.integer() }, { weight: 1, arbitrary: value });
    const obj = fc.oneof({ weight: 5, arbitrary: fc.dictionary(fc.string({ maxLength: 12 }), value, { maxKeys: 6 }) }, { weight: 1, arbitrary: value });
    const time = fc.oneof(
      { weight: 3, arbitrary: fc.date({ min: new Date('1970-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()) },
      { weight: 1, arbitrary: fc.integer({ min: -1e15, max: 1e16 }) }, { weight: 1, arbitrary: value },
      { weight: 1, arbitrary: fc.constantFrom('2016-04-26T18:14:48+0000', '2020-01-02 03:04:05.678901234Z', '2020-01-02', '2020-02-30', '1e3', '+002020-01-01T00:00:00Z') },
    );
    const call = fc.record({
      type: fc.oneof({ weight: 8, arbitrary: fc.constantFrom(...TYPES) }, { weight: 1, arbitrary: value }),
      userId: id, anonymousId: id, event: id, name: id, category: id, groupId: id, previousId: id,
      timestamp: time, originalTimestamp: time, sentAt: time,
      properties: obj, traits: obj, context: obj, integrations: obj,
      // Mostly a unique string (so the topic can be reconciled by messageId), sometimes fuzzed.
      messageIdFuzz: fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: id }),
    }, { requiredKeys: ['type'] });
    const request = fc.record({
      single: fc.boolean(),
      short: fc.boolean(),
      calls: fc.array(call, { minLength: 1, maxLength: 12 }),
      batchLevel: fc.record({ context: obj, integrations: obj, sentAt: time }, { requiredKeys: [] }),
      encoding: fc.constantFrom('identity', 'identity', 'identity', 'gzip', 'deflate', 'br', 'x-gzip'),
      contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', undefined),
      writeKeyIn: fc.constantFrom('basic', 'basic', 'basic-no-colon', 'body', 'wrong'),
      mutation: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), at: fc.double({ min: 0, max: 0.999, noNaN: true }) }) },
        { weight: 1, arbitrary: fc.record({ kind: fc.constant('bad-utf8' as const), bytes: fc.uint8Array({ minLength: 0, maxLength: 4 }) }) }),
    });

    const samples = fc.sample(request, { seed: SEED, numRuns: GENERATED_REQUESTS });
    const sents: Sent[] = samples.map((r, n) => {
      const calls = r.calls.map(({ messageIdFuzz, ...c }) => ({ ...c, messageId: messageIdFuzz === null ? mid() : messageIdFuzz } as Json));
      const single = r.single && typeof calls[0]!.type === 'string' && (TYPES as readonly string[]).includes(calls[0]!.type);
      const type = calls[0]!.type as CallType;
      const path = single ? `/v1/${r.short ? SHORT[type] : type}` : r.short ? '/v1/b' : '/v1/batch';
      const payload: Json = single ? { ...calls[0]! } : { batch: calls, ...r.batchLevel };
      if (r.writeKeyIn === 'body') payload.writeKey = writeKey;
      let body = json(payload);
      let expect: Sent['expect'];
      if (r.mutation?.kind === 'truncate') { body = body.subarray(0, Math.floor(r.mutation.at * (body.length - 1))); expect = { status: 400 }; }
      if (r.mutation?.kind === 'bad-utf8') {
        // Inside the first string value, so the JSON stays well formed and only the encoding is wrong.
        const at = body.indexOf('":"') + 3;
        body = at > 2 ? Buffer.concat([body.subarray(0, at), Buffer.from([0xff]), Buffer.from(r.mutation.bytes), body.subarray(at)]) : body;
        if (at > 2) expect = { status: 400, code: 'INVALID_UTF8' };
      }
      const coded = r.encoding === 'gzip' || r.encoding === 'x-gzip' ? gzipSync(body) : r.encoding === 'deflate' ? deflateSync(body) : r.encoding === 'br' ? brotliCompressSync(body) : body;
      const headers: Record<string, string> = { 'content-encoding': r.encoding };
      if (r.contentType) headers['content-type'] = r.contentType;
      if (r.writeKeyIn === 'basic') headers.authorization = basic;
      if (r.writeKeyIn === 'basic-no-colon') headers.authorization = `Basic ${Buffer.from(writeKey).toString('base64')}`;
      if (r.writeKeyIn === 'wrong') { headers.authorization = `Basic ${Buffer.from(`${writeKey.slice(0, -1)}X:`).toString('base64')}`; expect = { status: expect?.status ?? 401 }; }
      return { label: `generated #${n}`, path, body: coded, headers, calls: single ? [calls[0]] : calls, expect };
    });
    const t0 = Date.now();
    const got = await fire(sents);
    for (const [i, a] of got.entries()) checkAnswer(sents[i]!, a);
    const statuses = new Map<number, number>();
    for (const a of got) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    const callCount = sents.reduce((n, s) => n + s.calls!.length, 0);
    console.log(`# generated: ${sents.length} requests carrying ${callCount} calls in ${Date.now() - t0} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  });

  it('the process stayed up with bounded memory, and the topics hold exactly the accepted calls', async () => {
    assert.equal(ingest.proc.child.exitCode, null, 'ingest is still running');
    assert.equal((await fetch(`${ingest.url}/healthz`)).status, 200);
    const rssAfter = await rss(ingest.url);
    console.log(`# ${answers.length} requests; ingest RSS ${(rssBefore / 1e6).toFixed(0)} MB before, ${(rssAfter / 1e6).toFixed(0)} MB after`);
    assert.ok(rssAfter < rssBefore + 200e6, `RSS grew from ${rssBefore} to ${rssAfter}`);
    assert.ok(rssAfter < 600e6, `RSS ${rssAfter} stays under 600 MB`);
    assert.deepEqual(ingest.proc.output.filter((l) => /"level":"(error|fatal)"/.test(l)), [], 'no error logged');

    // What the answers say was written.
    const expectedIds: string[] = [];
    let expectedGenerated = 0;
    let expectedInvalid = 0;
    for (const { sent, answer } of answers) {
      if (answer.status !== 200 || !sent.calls) continue;
      const rejected = new Set<number>((answer.json?.rejected ?? []).map((r: Rec) => r.index as number));
      expectedInvalid += rejected.size;
      sent.calls.forEach((c, i) => {
        if (rejected.has(i)) return;
        const id = keptMessageId(c);
        if (id === undefined) expectedGenerated++; else expectedIds.push(id);
      });
    }
    const total = expectedIds.length + expectedGenerated;
    await reader.waitFor(topics.ingest, () => true, total, 30_000);
    await reader.waitFor(topics.invalidEvents, () => true, expectedInvalid, 30_000);
    // Anything extra (a partial write of a refused request) would arrive with or just after the rest.
    await new Promise((r) => setTimeout(r, 2000));
    const writtenIds = reader.values<Rec>(topics.ingest).map((v) => String(v.messageId));
    const known = new Set(expectedIds);
    const generated = writtenIds.filter((m) => !known.has(m) && UUID.test(m));
    const others = writtenIds.filter((m) => known.has(m) || !UUID.test(m)).sort();
    console.log(`# accepted calls ${total} (${expectedGenerated} with generated ids), written ${writtenIds.length}; rejected in batches ${expectedInvalid}, on invalid-events ${reader.values(topics.invalidEvents).length}`);
    const missing = multisetMinus(expectedIds, others);
    const extra = multisetMinus(others, expectedIds);
    const whoSent = (id: string) => answers.filter(({ sent }) => sent.body.includes(id)).map(({ sent, answer }) => `${sent.label} → ${answer.status} ${answer.text.slice(0, 200)}`);
    assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, `exactly the accepted calls, by messageId: ${JSON.stringify([...missing, ...extra].slice(0, 5).map((id) => [id, whoSent(id)]))}`);
    assert.equal(generated.length, expectedGenerated, 'calls without a usable messageId got a generated one each');
    assert.equal(reader.values(topics.invalidEvents).length, expectedInvalid, 'each call refused inside an accepted batch is on invalid-events, nothing else');
    for (const v of reader.values<Rec>(topics.ingest)) assert.ok(typeof v.sourceId === 'string' && v.sourceId.startsWith('src_'), 'written for our source');
  });

  /** The general rules for every answer, then the case's own expectation. */
  function checkAnswer(sent: Sent, a: Answer): void {
    const where = `${sent.label}: ${a.status} ${a.error ?? ''} ${a.text.slice(0, 300)}`;
    assert.equal(a.error, undefined, where);
    assert.ok((a.status >= 200 && a.status < 300) || (a.status >= 400 && a.status < 500), `2xx or 4xx: ${where}`);
    assert.ok(a.json && typeof a.json === 'object', `a JSON body: ${where}`);
    if (a.status >= 400) assert.ok(typeof a.json.code === 'string' && typeof a.json.message === 'string' && a.json.message.length > 0, `{code, message}: ${where}`);
    else {
      assert.equal(a.json.success, true, where);
      for (const r of a.json.rejected ?? []) assert.ok(Number.isInteger(r.index) && typeof r.reason === 'string' && typeof r.message === 'string', `rejected entries: ${where}`);
    }
    const e = sent.expect;
    if (e?.status !== undefined) assert.equal(a.status, e.status, where);
    if (e?.code !== undefined) assert.equal(a.json.code, e.code, where);
    if (e?.rejectedIndexes !== undefined) assert.deepEqual((a.json.rejected ?? []).map((r: Rec) => r.index), e.rejectedIndexes, where);
  }
});
