// The switchyard CLI performs every admin operation against a running control service.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { run } from '@switchyard/cli';
import { repoRoot } from '../tools/stack/paths.js';
import { registerSecret } from './support/secrets.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

const token = `cli-admin-${randomUUID()}`;

describe('switchyard CLI against the real control service', () => {
  const env = pipelineEnv(uniquePrefix('cli'), { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '' });
  let control: RunningService;
  /** Runs the CLI in-process; returns exit code and what it printed. */
  const cli = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await run(argv, { env: { SWITCHYARD_ADMIN_URL: control.url, SWITCHYARD_ADMIN_TOKEN: token }, stdout: (s) => { stdout += s; }, stderr: (s) => { stderr += s; } });
    return { code, stdout, stderr };
  };
  const cliJson = async (...argv: string[]) => {
    const res = await cli('--json', ...argv);
    assert.equal(res.code, 0, res.stderr);
    return JSON.parse(res.stdout);
  };

  before(async () => {
    await setupTopics(env);
    control = await startService('control', env);
  });
  after(async () => { await control?.stop(); });

  it('sources: create, list, get, update, delete', async () => {
    const created = await cliJson('sources', 'create', 'Mobile app');
    assert.equal(created.name, 'Mobile app');
    const id: string = created.id;

    const table = await cli('sources', 'list');
    assert.equal(table.code, 0);
    assert.match(table.stdout, /ID\s+NAME\s+ENABLED/);
    assert.match(table.stdout, new RegExp(`${id}\\s+Mobile app`));

    const shown = await cli('sources', 'get', id);
    assert.match(shown.stdout, /name:\s+Mobile app/);

    const updated = await cliJson('sources', 'update', id, '--name', 'iOS app', '--disable');
    assert.deepEqual([updated.name, updated.enabled], ['iOS app', false]);

    const gone = await cli('sources', 'delete', id);
    assert.equal(gone.code, 0);
    assert.match(gone.stdout, new RegExp(`deleted source ${id}`));
    const missing = await cli('sources', 'get', id);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /error SOURCE_NOT_FOUND/);
  });

  it('write keys: add (prints the key) and remove', async () => {
    const source = await cliJson('sources', 'create', 'Keys');
    const added = await cli('write-keys', 'add', source.id);
    assert.equal(added.code, 0, added.stderr);
    const key = added.stdout.trim();
    assert.ok(key.length >= 40);
    assert.deepEqual((await cliJson('sources', 'get', source.id)).writeKeys, [...source.writeKeys, key]);
    const removed = await cliJson('write-keys', 'remove', source.id, source.writeKeys[0]);
    assert.deepEqual(removed.writeKeys, [key]);
  });

  it('destinations: create with URLs, headers and a secret; list; get; update; delete', async () => {
    const source = await cliJson('sources', 'create', 'Dest owner');
    const secret = `cli-secret-${randomUUID()}`;
    const dest = await cliJson('destinations', 'create', '--source', source.id, '--name', 'Hooks', '--url', 'https://a.example.com/in', '--url', 'https://b.example.com/in', '--header', 'X-Team: data', '--secret', secret);
    assert.equal(dest.settings.sharedSecret, '********');
    assert.deepEqual(dest.settings.webhooks, [
      { url: 'https://a.example.com/in', headers: { 'X-Team': 'data' }, clientCertificate: null },
      { url: 'https://b.example.com/in', headers: { 'X-Team': 'data' }, clientCertificate: null },
    ]);

    const listed = await cli('destinations', 'list', '--source', source.id);
    assert.match(listed.stdout, new RegExp(`${dest.id}\\s+${source.id}\\s+Hooks`));
    const shown = await cli('destinations', 'get', dest.id);
    assert.equal(shown.code, 0);
    assert.ok(!shown.stdout.includes(secret));

    const updated = await cliJson('destinations', 'update', dest.id, '--url', 'https://c.example.com/only', '--no-secret', '--disable');
    assert.deepEqual([updated.settings.webhooks.length, updated.settings.sharedSecret, updated.enabled], [1, null, false]);

    const refused = await cli('destinations', 'update', dest.id, '--url', 'http://10.0.0.1/');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /error BLOCKED_ADDRESS: .*\(field: settings\.webhooks\[0\]\.url\)/);

    assert.equal((await cli('destinations', 'delete', dest.id)).code, 0);
    assert.equal((await cli('destinations', 'get', dest.id)).code, 1);
  });

  it('destination filters: --filter on create, refused with its path, replaced, removed with --no-filter', async () => {
    const source = await cliJson('sources', 'create', 'Filter owner');
    const filter = { types: ['track'], events: ['Order *'], where: { property: 'total', op: 'gt', value: 50 } };
    const dest = await cliJson('destinations', 'create', '--source', source.id, '--url', 'https://f.example.com/in', '--filter', JSON.stringify(filter));
    assert.deepEqual(dest.filter, filter);
    assert.match((await cli('destinations', 'get', dest.id)).stdout, /^filter: +\{"types":\["track"\]/m);
    const refused = await cli('destinations', 'update', dest.id, '--filter', '{"where":{"and":[{"context":"library.name","op":"exists"},{"trait":"plan","op":"gt","value":"x"}]}}');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /error INVALID_FILTER: .*\(field: filter\.where\.and\[1\]\.value\)/);
    assert.deepEqual((await cliJson('destinations', 'update', dest.id, '--filter', '{"types":["identify"]}')).filter, { types: ['identify'] });
    assert.equal((await cliJson('destinations', 'update', dest.id, '--no-filter')).filter, null);
  });

  it('Standard Webhooks: --standard-signatures prints a secret once; signing-secrets rotate and list', async () => {
    const source = await cliJson('sources', 'create', 'Signing owner');
    const created = await cli('destinations', 'create', '--source', source.id, '--url', 'https://s.example.com/in', '--standard-signatures');
    assert.equal(created.code, 0, created.stderr);
    const first = /^(whsec_\S+)$/m.exec(created.stdout)?.[1];
    assert.ok(first, created.stdout);
    registerSecret(first, 'CLI create output');
    const id = /^id: +(\S+)$/m.exec(created.stdout)![1]!;
    const rotated = await cli('signing-secrets', 'rotate', id, '--grace-period', '1h');
    assert.equal(rotated.code, 0, rotated.stderr);
    const second = rotated.stdout.trim();
    registerSecret(second, 'CLI rotate output');
    assert.match(second, /^whsec_/);
    assert.notEqual(second, first);
    const listed = await cliJson('signing-secrets', 'list', id);
    assert.equal(listed.secrets.length, 2);
    assert.ok(listed.secrets[0].expiresAt !== null && listed.secrets[1].expiresAt === null);
    const shown = await cli('destinations', 'get', id);
    assert.ok(!shown.stdout.includes(first.slice(6)) && !shown.stdout.includes(second.slice(6)));
    assert.match(shown.stdout, /\(current\)/);
  });

  it('deletions: request a user\'s deletion (notifications for sources with enabled webhooks)', async () => {
    const source = await cliJson('sources', 'create', 'Deletion owner');
    await cliJson('destinations', 'create', '--source', source.id, '--url', 'https://d.example.com/in');
    const res = await cli('deletions', 'request', 'user-to-forget', '--source', source.id);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`deletion del_[0-9a-f]+: 1 notification for source ${source.id}`));
  });

  it('audiences and computed traits: create, list, get, update, delete', async () => {
    const source = await cliJson('sources', 'create', 'Audience owner');
    const audience = await cliJson('audiences', 'create', '--source', source.id, '--name', 'Frequent Buyers', '--condition', '{"event":"Order Completed","within":"30d","count":{"op":"gte","value":3}}');
    assert.equal(audience.property, 'frequent_buyers');
    assert.match((await cli('audiences', 'list', '--source', source.id)).stdout, new RegExp(`${audience.id}\\s+${source.id}\\s+Frequent Buyers\\s+frequent_buyers`));
    const updated = await cliJson('audiences', 'update', audience.id, '--condition', '{"trait":"plan","op":"eq","value":"pro"}');
    assert.deepEqual(updated.condition, { trait: 'plan', op: 'eq', value: 'pro' });
    const bad = await cli('audiences', 'create', '--source', source.id, '--name', 'Bad', '--condition', '{"event":"X","within":"30d","count":{"op":"gte","value":-1}}');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /error INVALID_CONDITION: .*\(field: condition\.count\.value\)/);
    assert.equal((await cli('audiences', 'delete', audience.id)).code, 0);
    assert.equal((await cli('audiences', 'get', audience.id)).code, 1);

    const trait = await cliJson('computed-traits', 'create', '--source', source.id, '--name', 'Orders 30d', '--definition', '{"kind":"event_count","event":"Order Completed","within":"30d"}');
    assert.equal(trait.trait, 'orders_30d');
    assert.match((await cli('computed-traits', 'list')).stdout, new RegExp(trait.id));
    assert.equal((await cli('computed-traits', 'delete', trait.id)).code, 0);
  });

  it('a wrong token exits 1 with UNAUTHORIZED; the installed entry point runs as a process', async () => {
    let stderr = '';
    const code = await run(['sources', 'list'], { env: { SWITCHYARD_ADMIN_URL: control.url, SWITCHYARD_ADMIN_TOKEN: 'wrong-token-wrong-token' }, stdout: () => undefined, stderr: (s) => { stderr += s; } });
    assert.equal(code, 1);
    assert.match(stderr, /error UNAUTHORIZED/);

    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=source', '--import', 'tsx', 'packages/cli/src/main.ts', '--json', 'sources', 'list'], {
      cwd: repoRoot, env: { ...process.env, SWITCHYARD_ADMIN_URL: control.url, SWITCHYARD_ADMIN_TOKEN: token },
    });
    assert.ok(Array.isArray(JSON.parse(stdout).sources));
  });
});
