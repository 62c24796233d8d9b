// switchyard acls: the ACL table for a topic prefix, printed without calling the admin API.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { aclTable } from '@switchyard/platform/kafka/acls';
import { cli, useFakeAdminApi, api } from './test-support/cli-harness.js';

useFakeAdminApi();

describe('acls', () => {
  it('prints one row per grant for the prefix, each principal named once, and calls no API', async () => {
    const r = await cli(['acls', '--prefix', 'acme.'], {});
    assert.equal(r.code, 0);
    assert.equal(api.requests.length, 0);
    const lines = r.stdout.trimEnd().split('\n');
    assert.match(lines[0]!, /^PRINCIPAL\s+RESOURCE\s+PATTERN\s+NAME\s+OPERATIONS\s+FOR$/);
    const table = aclTable({ prefix: 'acme.' });
    assert.equal(lines.length - 1, table.reduce((n, p) => n + p.grants.length, 0));
    assert.match(r.stdout, /^User:switchyard-ingest\s+Topic\s+Literal\s+acme\.ingest\s+Write\s+accepted calls$/m);
    assert.match(r.stdout, /^\s+TransactionalId\s+Prefixed\s+acme\.fanout-p\s+Write\s/m);
    assert.equal(r.stdout.match(/User:switchyard-fanout\b/g)?.length, 1);
  });

  it('--json prints the table; the prefix comes from SWITCHYARD_TOPIC_PREFIX when not given', async () => {
    const r = await cli(['acls', '--json'], { SWITCHYARD_TOPIC_PREFIX: 'env.' });
    assert.equal(r.code, 0);
    assert.deepEqual(JSON.parse(r.stdout), JSON.parse(JSON.stringify({ prefix: 'env.', principals: aclTable({ prefix: 'env.' }) })));
  });

  it('--kafka-acls prints kafka-acls.sh lines with the given bootstrap server and admin config', async () => {
    const r = await cli(['acls', '--kafka-acls', '--bootstrap-server', 'kafka:9093', '--command-config', 'admin.properties'], {});
    assert.equal(r.code, 0);
    assert.ok(r.stdout.split('\n').includes('kafka-acls.sh --bootstrap-server kafka:9093 --command-config admin.properties --add --allow-principal User:switchyard-delivery --operation Read --operation Write --topic switchyard.delivery.retry. --resource-pattern-type prefixed'));
  });

  it('--registry-topics names the registry topics', async () => {
    const r = await cli(['acls', '--json', '--registry-topics', 'journal,snapshots'], {});
    const registry = (JSON.parse(r.stdout) as { principals: Array<{ role: string; grants: Array<{ name: string; resourceType: string }> }> }).principals.find((p) => p.role === 'registry')!;
    assert.deepEqual(registry.grants.filter((g) => g.resourceType === 'Topic').map((g) => g.name), ['journal', 'snapshots']);
  });

  it('refuses an empty prefix', async () => {
    const r = await cli(['acls', '--prefix', ''], {});
    assert.equal(r.code, 2);
    assert.match(r.stderr, /must not be empty/);
  });
});
