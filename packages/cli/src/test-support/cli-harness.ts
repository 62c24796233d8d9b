// What the CLI's command tests share: a fake admin API, started once per test file and emptied
// before each test, and helpers that run the CLI against it and check the one request it sent.
import assert from 'node:assert/strict';
import { after, before, beforeEach } from 'node:test';
import { run } from '../run.js';
import { startFakeAdminApi, type FakeAdminApi } from './fake-admin-api.js';

export const TOKEN = 'tok-secret-0123456789';

/** The clock the CLI sees in these tests, for --since durations. */
export const NOW = new Date('2025-01-10T12:00:00.000Z');

/** The fake admin API of the running test file; a live binding, set by useFakeAdminApi's before hook. */
export let api: FakeAdminApi;

/** Starts the fake admin API before the file's tests, resets it before each and closes it after them. */
export function useFakeAdminApi(): void {
  before(async () => {
    api = await startFakeAdminApi();
  });
  after(async () => {
    await api.close();
  });
  beforeEach(() => api.reset());
}

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the CLI against the fake API with the token in the environment. */
export async function cli(argv: string[], env: NodeJS.ProcessEnv = { SWITCHYARD_ADMIN_URL: api.url, SWITCHYARD_ADMIN_TOKEN: TOKEN }): Promise<Result> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, { env, stdout: (s) => void (stdout += s), stderr: (s) => void (stderr += s), now: () => NOW });
  // Whatever happens, the token must never be printed.
  assert.doesNotMatch(stdout + stderr, new RegExp(TOKEN));
  return { code, stdout, stderr };
}

/** Asserts the one request sent, including the bearer token. */
export function sent(method: string, path: string, body?: unknown): void {
  const req = api.only();
  assert.equal(req.method, method);
  assert.equal(req.path, path);
  assert.equal(req.headers.authorization, `Bearer ${TOKEN}`);
  assert.deepEqual(req.body, body);
  if (body !== undefined) assert.equal(req.headers['content-type'], 'application/json');
}

export function ok(r: Result): void {
  assert.equal(r.stderr, '');
  assert.equal(r.code, 0);
}
