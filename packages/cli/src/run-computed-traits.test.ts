// switchyard computed-traits, run against a fake admin API.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { ComputedTrait } from './admin-client.js';
import { api, cli, ok, sent, useFakeAdminApi } from './test-support/cli-harness.js';

useFakeAdminApi();

describe('computed-traits', () => {
  const definition = { kind: 'event_count', event: 'Order Completed', within: '30d' };
  const trait: ComputedTrait = {
    id: 'ct_1',
    sourceId: 'src_1',
    name: 'Orders 30d',
    trait: 'orders_30d',
    definition,
    createdAt: '2025-01-02T03:04:05.000Z',
    updatedAt: '2025-01-02T03:04:06.000Z',
  };
  const traitText = [
    'id:      ct_1',
    'source:  src_1',
    'name:    Orders 30d',
    'trait:   orders_30d',
    'kind:    event_count',
    'created: 2025-01-02T03:04:05.000Z',
    'updated: 2025-01-02T03:04:06.000Z',
    '',
    'definition:',
    '{',
    '  "kind": "event_count",',
    '  "event": "Order Completed",',
    '  "within": "30d"',
    '}',
    '',
  ].join('\n');

  it('list prints a table, filtered by --source', async () => {
    const last = { ...trait, id: 'ct_22', name: 'Last order', trait: 'last_order', definition: { kind: 'last_seen', event: 'Order Completed' } };
    api.on('GET', '/v1/computed-traits?sourceId=src_1', { status: 200, body: { computedTraits: [trait, last] } });
    const r = await cli(['computed-traits', 'list', '--source', 'src_1']);
    ok(r);
    sent('GET', '/v1/computed-traits?sourceId=src_1');
    assert.equal(
      r.stdout,
      ['ID     SOURCE  NAME        TRAIT       KIND', 'ct_1   src_1   Orders 30d  orders_30d  event_count', 'ct_22  src_1   Last order  last_order  last_seen', ''].join('\n'),
    );
    api.requests.length = 0;
    const body = { computedTraits: [] };
    api.on('GET', '/v1/computed-traits', { status: 200, body });
    const all = await cli(['computed-traits', 'list']);
    ok(all);
    sent('GET', '/v1/computed-traits');
    assert.equal(all.stdout, 'ID  SOURCE  NAME  TRAIT  KIND\n');
    const j = await cli(['--json', 'computed-traits', 'list']);
    assert.equal(j.stdout, `${JSON.stringify(body, null, 2)}\n`);
  });

  it('create sends the source, name and parsed --definition, and prints the trait', async () => {
    api.on('POST', '/v1/computed-traits', { status: 201, body: trait });
    const r = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition', JSON.stringify(definition)]);
    ok(r);
    sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'Orders 30d', definition });
    assert.equal(r.stdout, traitText);
    const j = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition', JSON.stringify(definition), '--json']);
    ok(j);
    assert.deepEqual(JSON.parse(j.stdout), trait);
  });

  it('create reads the definition from --definition-file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-cli-'));
    try {
      const file = join(dir, 'definition.json');
      await writeFile(file, JSON.stringify(definition, null, 2));
      api.on('POST', '/v1/computed-traits', { status: 201, body: trait });
      ok(await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'Orders 30d', '--definition-file', file]));
      sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'Orders 30d', definition });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('create refuses a missing or invalid definition without sending anything', async () => {
    const base = ['computed-traits', 'create', '--source', 'src_1', '--name', 'n'];
    const bad: [string[], RegExp][] = [
      [base, /^error: give --definition <json> or --definition-file <path>$/m],
      [[...base, '--definition', 'kind=event_count'], /^error: --definition is not valid JSON: /m],
      [[...base, '--definition', '"event_count"'], /^error: --definition must be a JSON object/m],
      [[...base, '--definition', '{}', '--definition-file', 'd.json'], /cannot be used with option '--definition-file <path>'/],
      [[...base, '--definition-file', join(tmpdir(), 'switchyard-no-such-file.json')], /^error: cannot read --definition-file /m],
    ];
    for (const [argv, message] of bad) {
      const r = await cli(argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.match(r.stderr, message);
    }
    assert.equal(api.requests.length, 0);
  });

  it('create exits 1 with the API error and its field', async () => {
    api.on('POST', '/v1/computed-traits', { status: 400, body: { code: 'INVALID_DEFINITION', message: 'must be one of event_count, last_seen, latest_property', field: 'definition.kind' } });
    const r = await cli(['computed-traits', 'create', '--source', 'src_1', '--name', 'n', '--definition', '{"kind":"sum"}']);
    assert.equal(r.code, 1);
    sent('POST', '/v1/computed-traits', { sourceId: 'src_1', name: 'n', definition: { kind: 'sum' } });
    assert.equal(r.stdout, '');
    assert.equal(r.stderr, 'error INVALID_DEFINITION: must be one of event_count, last_seen, latest_property (field: definition.kind)\n');
  });

  it('get encodes the id and shows the definition laid out', async () => {
    api.on('GET', '/v1/computed-traits/ct%201', { status: 200, body: trait });
    const r = await cli(['computed-traits', 'get', 'ct 1']);
    ok(r);
    sent('GET', '/v1/computed-traits/ct%201');
    assert.equal(r.stdout, traitText);
    const j = await cli(['computed-traits', 'get', 'ct 1', '--json']);
    assert.deepEqual(JSON.parse(j.stdout), trait);
    api.on('GET', '/v1/computed-traits/nope', { status: 404, body: { code: 'COMPUTED_TRAIT_NOT_FOUND', message: 'no computed trait "nope"' } });
    const e = await cli(['computed-traits', 'get', 'nope']);
    assert.equal(e.code, 1);
    assert.equal(e.stderr, 'error COMPUTED_TRAIT_NOT_FOUND: no computed trait "nope"\n');
  });

  it('delete prints what it deleted, and nothing with --json', async () => {
    api.on('DELETE', '/v1/computed-traits/ct_1', { status: 204 });
    const r = await cli(['computed-traits', 'delete', 'ct_1']);
    ok(r);
    sent('DELETE', '/v1/computed-traits/ct_1');
    assert.equal(r.stdout, 'deleted computed trait ct_1\n');
    const j = await cli(['computed-traits', 'delete', 'ct_1', '--json']);
    ok(j);
    assert.equal(j.stdout, '');
    const missing = await cli(['computed-traits', 'delete']);
    assert.equal(missing.code, 2);
  });
});
