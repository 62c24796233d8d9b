// switchyard audiences, run against a fake admin API.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Audience } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

useFakeAdminApi();

describe('audiences', () => {
  const condition = { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { event: 'Order Completed', within: '30d', count: { op: 'gte', value: 3 } }] };
  const audience: Audience = {
    id: 'aud_1',
    sourceId: 'src_1',
    name: 'Big Spenders',
    property: 'big_spenders',
    condition,
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:06.000Z',
  };
  const audienceText = [
    'id:       aud_1',
    'source:   src_1',
    'name:     Big Spenders',
    'property: big_spenders',
    'created:  2025-01-02T03:04:05.000Z',
    'updated:  2025-01-02T03:04:06.000Z',
    '',
    'condition:',
    '{',
    '  "and": [',
    '    {',
    '      "trait": "plan",',
    '      "op": "eq",',
    '      "value": "pro"',
    '    },',
    '    {',
    '      "event": "Order Completed",',
    '      "within": "30d",',
    '      "count": {',
    '        "op": "gte",',
    '        "value": 3',
    '      }',
    '    }',
    '  ]',
    '}',
    '',
  ].join('\n');

  it('list prints a table, filtered by --source', async () => {
    api.on('GET', '/v1/audiences?sourceId=src%2F1', { status: 200, body: { audiences: [audience, { ...audience, id: 'aud_22', name: 'Churned', property: 'churned' }] } });
    const r = await cli(['audiences', 'list', '--source', 'src/1']);
    ok(r);
    sent('GET', '/v1/audiences?sourceId=src%2F1');
    assert.equal(r.stdout, ['ID      SOURCE  NAME          PROPERTY', 'aud_1   src_1   Big Spenders  big_spenders', 'aud_22  src_1   Churned       churned', ''].join('\n'));
    api.requests.length = 0;
    api.on('GET', '/v1/audiences', { status: 200, body: { audiences: [] } });
    const all = await cli(['audiences', 'list']);
    ok(all);
    sent('GET', '/v1/audiences');
    assert.equal(all.stdout, 'ID  SOURCE  NAME  PROPERTY\n');
  });

  it('list --json prints the response as is', async () => {
    const body = { audiences: [audience] };
    api.on('GET', '/v1/audiences', { status: 200, body });
    const r = await cli(['audiences', 'list', '--json']);
    ok(r);
    assert.equal(r.stdout, `${JSON.stringify(body, null, 2)}\n`);
  });

  it('create sends the source, name and parsed --condition, and prints the audience', async () => {
    api.on('POST', '/v1/audiences', { status: 201, body: audience });
    const r = await cli(['audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition', JSON.stringify(condition)]);
    ok(r);
    sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'Big Spenders', condition });
    assert.equal(r.stdout, audienceText);
    const j = await cli(['--json', 'audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition', JSON.stringify(condition)]);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), audience);
  });

  it('create reads the condition from --condition-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'condition.json');
      await writeFile(file, `\uFEFF${JSON.stringify(condition, null, 2)}\n`);
      api.on('POST', '/v1/audiences', { status: 201, body: audience });
      ok(await cli(['audiences', 'create', '--source', 'src_1', '--name', 'Big Spenders', '--condition-file', file]));
      sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'Big Spenders', condition });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('create refuses a missing, unreadable or invalid condition without sending anything', async () => {
    const base = ['audiences', 'create', '--source', 'src_1', '--name', 'n'];
    const bad: [string[], RegExp][] = [
      [base, /^error: give --condition <json> or --condition-file <path>$/m],
      [[...base, '--condition', '{"trait": "plan",'], /^error: --condition is not valid JSON: /m],
      [[...base, '--condition', ''], /^error: --condition is not valid JSON: /m],
      [[...base, '--condition', '[{"trait": "plan"}]'], /^error: --condition must be a JSON object/m],
      [[...base, '--condition', 'null'], /^error: --condition must be a JSON object/m],
      [[...base, '--condition', '{}', '--condition-file', 'c.json'], /^error: option '--condition <json>' cannot be used with option '--condition-file <path>'$/m],
      [[...base, '--condition-file', join(tmpdir(), 'switchyard-no-such-file.json')], /^error: cannot read --condition-file .*switchyard-no-such-file\.json: ENOENT/m],
      [['audiences', 'create', '--name', 'n', '--condition', '{}'], /^error: required option '--source <id>' not specified$/m],
      [['audiences', 'create', '--source', 'src_1', '--condition', '{}'], /^error: required option '--name <name>' not specified$/m],
    ];
    for (const [argv, message] of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.stdout, '');
      assert.match(r.stderr, message);
    }
    assert.equal(api.requests.length, 0);
  });

  it('create exits 1 with the INVALID_CONDITION error and its field', async () => {
    const bad = { and: [{ trait: 'plan', op: 'eq', value: 'pro' }, { event: 'Order Completed', within: '30d', count: { op: 'gte', value: -1 } }] };
    api.on('POST', '/v1/audiences', {
      status: 400,
      body: { code: 'INVALID_CONDITION', message: 'must be a whole number from 0 to 10000', field: 'condition.and[1].count.value' },
    });
    const r = await cli(['audiences', 'create', '--source', 'src_1', '--name', 'n', '--condition', JSON.stringify(bad)]);
    assert.equal(r.code, 1);
    sent('POST', '/v1/audiences', { sourceId: 'src_1', name: 'n', condition: bad });
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error INVALID_CONDITION: must be a whole number from 0 to 10000 (field: condition.and[1].count.value)\n');
  });

  it('create exits 1 on DUPLICATE_PROPERTY and UNKNOWN_SOURCE', async () => {
    for (const [code, message, field] of [['DUPLICATE_PROPERTY', 'the source already has a property n', 'name'], ['UNKNOWN_SOURCE', 'no source "src_x"', 'sourceId']] as const) {
      api.on('POST', '/v1/audiences', { status: 400, body: { code, message, field } });
      const r = await cli(['audiences', 'create', '--source', 'src_x', '--name', 'n', '--condition', '{"trait":"a","op":"exists"}']);
      assert.equal(r.code, 1);
      assert.equal(r.stderr, `error ${code}: ${message} (field: ${field})\n`);
    }
  });

  it('get encodes the id and shows the condition laid out', async () => {
    api.on('GET', '/v1/audiences/aud%2F1', { status: 200, body: audience });
    const r = await cli(['audiences', 'get', 'aud/1']);
    ok(r);
    sent('GET', '/v1/audiences/aud%2F1');
    assert.equal(r.stdout, audienceText);
    const j = await cli(['audiences', 'get', 'aud/1', '--json']);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), audience);
  });

  it('get escapes control characters in the condition', async () => {
    api.on('GET', '/v1/audiences/aud_1', { status: 200, body: { ...audience, condition: { trait: 'plan', op: 'eq', value: 'a\u009b2Jb' } } });
    const r = await cli(['audiences', 'get', 'aud_1']);
    ok(r);
    assert.match(r.stdout, /^ {2}"value": "a\\u009b2Jb"$/m);
  });

  it('get of an unknown id exits 1 with AUDIENCE_NOT_FOUND', async () => {
    api.on('GET', '/v1/audiences/nope', { status: 404, body: { code: 'AUDIENCE_NOT_FOUND', message: 'no audience "nope"' } });
    const r = await cli(['audiences', 'get', 'nope']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error AUDIENCE_NOT_FOUND: no audience "nope"\n');
  });

  it('update sends only the new condition, from --condition or --condition-file', async () => {
    const next = { not: { trait: 'plan', op: 'eq', value: 'free' } };
    api.on('PATCH', '/v1/audiences/aud_1', { status: 200, body: { ...audience, condition: next } });
    const r = await cli(['audiences', 'update', 'aud_1', '--condition', JSON.stringify(next)]);
    ok(r);
    sent('PATCH', '/v1/audiences/aud_1', { condition: next });
    assert.match(r.stdout, /^condition:\n\{\n {2}"not": \{\n {4}"trait": "plan",/m);
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'c.json');
      await writeFile(file, JSON.stringify(next));
      api.requests.length = 0;
      const j = await cli(['--json', 'audiences', 'update', 'aud_1', '--condition-file', file]);
      ok(j);
      sent('PATCH', '/v1/audiences/aud_1', { condition: next });
      assert.deepEqual(JSON.parse(j.stdout), { ...audience, condition: next });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('update refuses a missing or invalid condition, and reports INVALID_CONDITION', async () => {
    for (const argv of [['audiences', 'update', 'aud_1'], ['audiences', 'update', 'aud_1', '--condition', "{'a': 1}"], ['audiences', 'update', '--condition', '{}']]) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, /^error: /);
    }
    assert.equal(api.requests.length, 0);
    api.on('PATCH', '/v1/audiences/aud_1', { status: 400, body: { code: 'INVALID_CONDITION', message: 'must have one of trait, event, and, or, not', field: 'condition' } });
    const e = await cli(['audiences', 'update', 'aud_1', '--condition', '{}']);
    assert.equal(e.code, 1);
    sent('PATCH', '/v1/audiences/aud_1', { condition: {} });
    assert.equal(e.stderr, 'error INVALID_CONDITION: must have one of trait, event, and, or, not (field: condition)\n');
  });

  it('delete prints what it deleted, nothing with --json, and exits 1 when not found', async () => {
    api.on('DELETE', '/v1/audiences/aud_1', { status: 204 });
    const r = await cli(['audiences', 'delete', 'aud_1']);
    ok(r);
    sent('DELETE', '/v1/audiences/aud_1');
    assert.equal(r.stdout, 'deleted audience aud_1\n');
    const j = await cli(['--json', 'audiences', 'delete', 'aud_1']);
    ok(j);
    assert.equal(j.stdout, '');
    api.on('DELETE', '/v1/audiences/nope', { status: 404, body: { code: 'AUDIENCE_NOT_FOUND', message: 'no audience "nope"' } });
    const e = await cli(['audiences', 'delete', 'nope']);
    assert.equal(e.code, 1);
    assert.equal(e.stdout, '');
    assert.equal(e.stderr, 'error AUDIENCE_NOT_FOUND: no audience "nope"\n');
  });

  it('create --help explains the condition language', async () => {
    const h = await cli(['audiences', 'create', '--help']);
    assert.equal(h.code, 0);
    assert.match(h.stdout, /--condition-file <path>/);
    assert.match(h.stdout, /\{"trait": "plan", "op": "eq", "value": "pro"\}/);
  });
});
