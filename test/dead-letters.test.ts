// Dead letters through the admin API: listed with filters, inspected, and replayed as fresh tasks
// that the (now healthy) receiver accepts.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { run } from '@switchyard/cli';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeDestination, makeSource, writeConfig } from './support/config.js';
import { requestJson } from './support/http.js';
import { PipelineWriter, task } from './support/pipeline-writer.js';
import { startReceiver, type Receiver } from './support/receiver.js';
import { pipelineEnv, setupTopics, startService, type RunningService } from './support/services.js';
import { uniquePrefix } from './support/stack.js';

describe('dead letters: list, inspect, replay', () => {
  const prefix = uniquePrefix('dlq');
  const token = `dlq-admin-${randomUUID()}`;
  let receiver: Receiver;
  let refusing = true;
  let control: RunningService;
  let delivery: RunningService;
  let writer: PipelineWriter;
  const source = makeSource();
  let destination: ReturnType<typeof makeDestination>;
  const api = (method: string, path: string, body?: unknown) => requestJson(method, `${control.url}${path}`, { token, body });

  before(async () => {
    receiver = await startReceiver(() => (refusing ? { status: 410, body: 'gone for now' } : {}));
    destination = makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {}, clientCertificate: null }] });
    const env = pipelineEnv(prefix, { SWITCHYARD_ADMIN_TOKEN: token, SWITCHYARD_ALLOWED_CIDRS: '127.0.0.0/8' });
    await setupTopics(env);
    await writeConfig(prefix, { sources: [source], destinations: [destination] });
    [control, delivery] = await Promise.all([startService('control', env), startService('delivery', env)]);
    writer = await new PipelineWriter().start();
  });
  after(async () => {
    await writer?.stop();
    await Promise.all([control?.stop(), delivery?.stop()]);
    await receiver?.close();
  });

  it('a refused task is listed (filters work), inspectable with its body, and replay delivers it', async () => {
    const tasks = [task(destination.id, { event: 'First' }), task(destination.id, { event: 'Second' })];
    await writer.tasks(topicNames(prefix).delivery, tasks);
    await receiver.waitFor((reqs) => reqs.length >= 2);

    let list: Awaited<ReturnType<typeof api>>;
    const deadline = Date.now() + 15_000;
    do {
      list = await api('GET', `/v1/dead-letters?destinationId=${destination.id}`);
      if (list.body.total >= 2) break;
      await new Promise((r) => setTimeout(r, 200));
    } while (Date.now() < deadline);
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 2);
    const letters = list.body.deadLetters as Array<Record<string, unknown>>;
    assert.deepEqual(letters.map((l) => [l.reason, l.status, l.responseExcerpt, l.attempts, l.replayedAt]), [['permanent_status', 410, 'gone for now', 1, null], ['permanent_status', 410, 'gone for now', 1, null]]);
    assert.deepEqual(new Set(letters.map((l) => l.messageId)), new Set(tasks.map((t) => t.messageId)));

    assert.equal((await api('GET', '/v1/dead-letters?reason=deadline')).body.total, 0);
    assert.equal((await api('GET', `/v1/dead-letters?destinationId=${destination.id}&limit=1`)).body.deadLetters.length, 1);
    assert.equal((await api('GET', `/v1/dead-letters?since=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).body.total, 0);
    assert.equal((await api('GET', '/v1/dead-letters?limit=0')).status, 400);

    const one = await api('GET', `/v1/dead-letters/${letters[0]!.id}`);
    assert.equal(JSON.parse(one.body.body).messageId, letters[0]!.messageId);
    assert.equal((await api('GET', '/v1/dead-letters/0-999999')).status, 404);

    refusing = false;
    const replay = await api('POST', '/v1/dead-letters/replay', { ids: [letters[0]!.id, 'nope'] });
    assert.equal(replay.status, 202);
    assert.deepEqual(replay.body, { replayed: [letters[0]!.id], notFound: ['nope'] });
    await receiver.waitFor(() => receiver.forMessage(letters[0]!.messageId as string).length === 2);
    const after = await api('GET', `/v1/dead-letters/${letters[0]!.id}`);
    assert.ok(after.body.replayedAt !== null);
    assert.equal(receiver.forMessage(letters[1]!.messageId as string).length, 1, 'the other one was not replayed');

    // The same through the CLI: list as JSON, then replay the second letter.
    const cli = async (...argv: string[]) => {
      let stdout = '';
      let stderr = '';
      const code = await run(argv, { env: { SWITCHYARD_ADMIN_URL: control.url, SWITCHYARD_ADMIN_TOKEN: token }, stdout: (t) => { stdout += t; }, stderr: (t) => { stderr += t; } });
      return { code, stdout, stderr };
    };
    const listed = await cli('--json', 'dead-letters', 'list', '--destination', destination.id, '--since', '1h');
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(JSON.parse(listed.stdout).total, 2);
    const table = await cli('dead-letters', 'list', '--reason', 'permanent_status');
    assert.match(table.stdout, /2 of 2 dead letters/);
    const replayed = await cli('dead-letters', 'replay', letters[1]!.id as string);
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /replayed 1/);
    await receiver.waitFor(() => receiver.forMessage(letters[1]!.messageId as string).length === 2);
    assert.equal((await cli('dead-letters', 'replay', 'no-such-id')).code, 1);
  });
});
