// The deployment as users run it, in real containers (podman, as root; .ci/run installs it):
// - the image: built by `npm run image` from the Dockerfile on a base made here, at most 300 MB,
//   Node 20, a non-root user;
// - the compose stack: docker-compose.yml under podman-compose with Kafka, the registry, Prometheus
//   and the demo receiver in containers built the same way; a call to ingest's published port
//   reaches the receiver with a valid signature;
// - Prometheus, with the project's scrape configuration, scrapes every service; after traffic every
//   dashboard query returns a series and every alert expression runs;
// - the Kubernetes manifests: the small overlay under `podman kube play` (Deployments, ConfigMaps, a
//   Secret, the set-up Job) against the same Kafka and registry; every pod answers ready on its
//   readinessProbe's path and port, and a call reaches the receiver;
// - taking it all down leaves no container, pod, network or volume.
// No step is skipped: a missing tool fails the file, naming it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { composeDown, composeUp, containerName, defaultServices, leftovers, networkName, readCompose, substitute } from '../tools/podman/compose.js';
import { alertQueries, dashboardQueries, seriesCount } from '../tools/podman/dashboard-queries.js';
import { buildSwitchyard, ensureImages } from '../tools/podman/images.js';
import { downKube, planKube, playKube, podAddress, renderKube, type KubeObject, type PlayedKube } from '../tools/podman/kube.js';
import { imageSize, podman } from '../tools/podman/podman.js';
import { scrape } from './support/metrics.js';
import { testKafka } from './support/stack.js';

const project = 'switchyard-ci';
const ingest = 'http://127.0.0.1:8080';
const control = 'http://127.0.0.1:8081';
const prometheus = 'http://127.0.0.1:9090';
const adminToken = 'compose-demo-admin-token';
const writeKey = 'demo-write-key';
const log = (line: string) => console.log(`# ${line}`);
const minutes = (n: number) => n * 60_000;

for (const tool of ['podman', 'podman-compose', 'debootstrap', 'kubectl']) {
  const found = spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
  if (!found) throw new Error(`${tool} is not installed: .ci/run installs it (apt-get install podman podman-compose debootstrap; kubectl from kubernetes-client)`);
}

async function post(url: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`${key}:`).toString('base64')}` });
const bearer = { authorization: `Bearer ${adminToken}` };

/** Waits until the demo receiver has logged the call with this message id, and returns that line. */
async function receivedCall(messageId: string, timeoutMs = 60_000): Promise<{ signature: string; path: string }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { stdout } = await podman(['logs', containerName(project, 'receiver')]);
    for (const line of stdout.split('\n')) {
      if (!line.includes(messageId)) continue;
      const parsed = JSON.parse(line) as { msg: string; signature: string; path: string; body: { messageId: string } };
      if (parsed.msg === 'received' && parsed.body.messageId === messageId) return parsed;
    }
    if (Date.now() > deadline) throw new Error(`the receiver did not get ${messageId} within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try { const v = await probe(); if (v !== undefined) return v; } catch (err) { last = err; }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs / 1000} s${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

describe('the deployment in containers', { timeout: minutes(30) }, () => {
  let image = '';

  before(async () => {
    // A stack left over from an interrupted run would hold the published ports.
    await composeDown(project).catch(() => undefined);
  });

  after(async () => {
    await composeDown(project).catch((err: Error) => log(`compose down: ${err.message}`));
  });

  it('npm run image builds the Switchyard image: at most 300 MB, Node 20, a non-root user', { timeout: minutes(12) }, async () => {
    image = await buildSwitchyard(log);
    const size = await imageSize(image);
    log(`${image}: ${Math.round(size / 1e6)} MB`);
    assert.ok(size <= 300e6, `${image} is ${Math.round(size / 1e6)} MB, over 300 MB`);
    const user = (await podman(['image', 'inspect', '--format', '{{.Config.User}}', image])).stdout.trim();
    assert.equal(user, '1000:1000');
    const run = (args: string[]) => podman(['run', '--rm', '--entrypoint', args[0]!, image, ...args.slice(1)]);
    assert.match((await run(['node', '--version'])).stdout.trim(), /^v20\./);
    assert.equal((await run(['id', '-u'])).stdout.trim(), '1000');
    // The entry point names the services it runs, and refuses anything else.
    const unknown = await podman(['run', '--rm', image, 'nonesuch'], { allowFailure: true });
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /setup\|control\|ingest\|fanout\|delivery\|audiences/);
  });

  it('the images the compose stack runs are built here: Kafka, the registry, curl, Prometheus', { timeout: minutes(10) }, async () => {
    await ensureImages(['kafka', 'registry', 'curl', 'prometheus'], log);
  });

  it('the compose stack comes up; a call to ingest\'s published port reaches the receiver, signed', { timeout: minutes(10) }, async () => {
    const t0 = Date.now();
    await composeUp({ project, services: defaultServices(readCompose()), log });
    log(`compose up in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    // Every Switchyard service ran from the image: setup exited 0, the others answer ready.
    for (const service of ['control', 'ingest', 'fanout', 'delivery', 'audiences']) {
      await until(`${service} ready`, 120_000, async () => (await podman(['healthcheck', 'run', containerName(project, service)], { allowFailure: true })).code === 0 || undefined);
    }
    const messageId = `compose-${Date.now()}`;
    const res = await until('ingest accepting the demo write key', 60_000, async () => {
      const r = await post(`${ingest}/v1/track`, { type: 'track', event: 'Compose Test', userId: 'u-compose', messageId }, basic(writeKey));
      return r.status === 200 ? r : undefined;
    });
    assert.equal(res.status, 200);
    const got = await receivedCall(messageId);
    assert.equal(got.signature, 'valid');
  });

  it('Prometheus scrapes every service; every dashboard query returns a series, every alert expression runs', { timeout: minutes(6) }, async () => {
    await traffic();
    const targets = await until('every scrape target up', 120_000, async () => {
      const body = await (await fetch(`${prometheus}/api/v1/targets`)).json() as { data: { activeTargets: Array<{ labels: { job: string }; health: string }> } };
      const t = body.data.activeTargets;
      return t.length > 0 && t.every((x) => x.health === 'up') ? t : undefined;
    });
    assert.deepEqual(targets.map((t) => t.labels.job).sort(), ['prometheus', 'switchyard-audiences', 'switchyard-control', 'switchyard-delivery', 'switchyard-fanout', 'switchyard-ingest']);
    // rate() needs two scrapes after the traffic (scrape_interval 15 s); give it three.
    await new Promise((r) => setTimeout(r, 45_000));
    const empty: string[] = [];
    for (const q of dashboardQueries()) if (await seriesCount(prometheus, q.expr) === 0) empty.push(`${q.origin}: ${q.expr}`);
    for (const q of alertQueries()) await seriesCount(prometheus, q.expr); // must parse and run; may be empty
    assert.deepEqual(empty, [], `dashboard queries that returned no series:\n${empty.join('\n')}`);
  });

  it('the small overlay runs under podman kube play: the set-up Job, every pod ready, a call delivered', { timeout: minutes(8) }, async () => {
    // The compose stack's own services step aside; its Kafka, registry and receiver stay.
    await podman(['stop', '-t', '20', ...['control', 'ingest', 'fanout', 'delivery', 'audiences'].map((s) => containerName(project, s))]);
    const subnet = substitute(readCompose().networks?.default?.ipam?.config?.[0]?.subnet ?? '');
    const objects = await renderKube({ kafkaBrokers: 'kafka:9092', registryUrl: 'http://registry:8080/apis/ccompat/v7', adminToken: 'kube-admin-token', image, allowedCidrs: subnet });
    const plan = planKube(objects);
    log(`not run by podman (a real cluster's): ${plan.leftOut.join(', ')}`);
    let played: PlayedKube | undefined;
    try {
      played = await playKube(plan, networkName(project), log);
      const deployments = plan.workloads.filter((o) => o.kind === 'Deployment');
      assert.equal(deployments.length, 5);
      const address = new Map<string, string>();
      for (const d of deployments) {
        const probe = readinessProbe(d);
        const ip = await podAddress(d.metadata.name);
        address.set(d.metadata.name, `http://${ip}:${probe.port}`);
        await until(`${d.metadata.name} ready on ${probe.path}`, 120_000, async () => (await fetch(`http://${ip}:${probe.port}${probe.path}`)).status === 200 || undefined);
      }
      const kubeControl = address.get('switchyard-control')!;
      const auth = { authorization: 'Bearer kube-admin-token' };
      const source = await (await post(`${kubeControl}/v1/sources`, { name: 'Kube' }, auth)).json() as { id: string; writeKeys: string[] };
      const dest = await post(`${kubeControl}/v1/destinations`, { sourceId: source.id, name: 'Receiver', type: 'webhooks', enabled: true, settings: { sharedSecret: 'demo-shared-secret', webhooks: [{ url: 'http://receiver:8090/kube' }] } }, auth);
      assert.equal(dest.status, 201);
      const messageId = `kube-${Date.now()}`;
      await until('kube ingest accepting the new write key', 60_000, async () => {
        const r = await post(`${address.get('switchyard-ingest')}/v1/track`, { type: 'track', event: 'Kube Test', userId: 'u-kube', messageId }, basic(source.writeKeys[0]!));
        return r.status === 200 || undefined;
      });
      const got = await receivedCall(messageId);
      assert.equal(got.path, '/kube');
      assert.equal(got.signature, 'valid');
    } finally {
      if (played) await downKube(played);
    }
    const pods = (await podman(['pod', 'ps', '--format', '{{.Name}}'])).stdout.trim();
    assert.equal(pods, '', `pods left after podman kube down: ${pods}`);
  });

  it('taking it down leaves no container, pod, network or volume', { timeout: minutes(3) }, async () => {
    await composeDown(project);
    assert.deepEqual(await leftovers(project), []);
  });
});

/**
 * Traffic that gives every dashboard panel something to show: calls delivered, a request refused,
 * a destination whose receiver refuses the signature (401: dead-lettered), one that is never
 * reachable (retried; its breaker opens and fan-out holds its tasks), one whose filter keeps most
 * calls out, an audience and a computed trait that change as identify and track calls arrive, and
 * a record produced straight to the ingest topic that is not a call (fan-out sets it aside).
 */
async function traffic(): Promise<void> {
  const create = async (path: string, body: unknown) => {
    const r = await post(`${control}${path}`, body, bearer);
    assert.equal(r.status, 201, `${path}: ${r.status} ${await r.text()}`);
  };
  const webhooks = (name: string, url: string, extra: Record<string, unknown> = {}) =>
    create('/v1/destinations', { sourceId: 'demo', name, type: 'webhooks', enabled: true, settings: { webhooks: [{ url }] }, ...extra });
  await create('/v1/destinations', { sourceId: 'demo', name: 'Wrong secret', type: 'webhooks', enabled: true, settings: { sharedSecret: 'not-the-receivers-secret', webhooks: [{ url: 'http://receiver:8090/refused' }] } });
  await webhooks('Unreachable', 'http://receiver:8099/down');
  await webhooks('Orders only', 'http://receiver:8090/orders', { filter: { events: ['Order *'] } });
  await create('/v1/audiences', { sourceId: 'demo', name: 'Pro Users', condition: { trait: 'plan', op: 'eq', value: 'pro' } });
  await create('/v1/computed-traits', { sourceId: 'demo', name: 'Orders Last Hour', definition: { kind: 'event_count', event: 'Order Completed', within: '1h' } });
  const calls = async (n: number) => {
    for (let i = 0; i < 4; i++) {
      const r = await post(`${ingest}/v1/identify`, { type: 'identify', userId: `u-${i}`, traits: { plan: i % 2 ? 'pro' : 'free' } }, basic(writeKey));
      assert.equal(r.status, 200);
    }
    for (let i = 0; i < n; i++) {
      const r = await post(`${ingest}/v1/track`, { type: 'track', event: i % 3 ? 'Dashboard Traffic' : 'Order Completed', userId: `u-${i % 4}`, properties: { n: i } }, basic(writeKey));
      assert.equal(r.status, 200);
    }
  };
  // Each effect is waited for on the service's own /metrics (published ports), sending more calls
  // while it has not shown: configuration reaches fan-out and audiences through a topic, and fan-out
  // holds a destination's tasks only once delivery has reported its breaker open.
  const shows = (what: string, url: string, name: string) => until(what, 90_000, async () => {
    if ((await scrape(url))(name) > 0) return true;
    await calls(5);
    return undefined;
  });
  await calls(30);
  await shows('the unreachable destination\'s breaker open', 'http://127.0.0.1:8083', 'delivery_breaker_open');
  await shows('fan-out holding its tasks', 'http://127.0.0.1:8082', 'fanout_tasks_held_total');
  await shows('an audience membership change', 'http://127.0.0.1:8084', 'audiences_membership_changes_total');
  await shows('a computed trait change', 'http://127.0.0.1:8084', 'audiences_computed_trait_changes_total');
  const bad = await post(`${ingest}/v1/track`, { type: 'track', event: 'No user' }, basic(writeKey));
  assert.equal(bad.status, 400);
  await produceNotACall();
}

/** A record on the ingest topic that is no call, as a misconfigured producer would write it. */
async function produceNotACall(): Promise<void> {
  const producer = testKafka('containers', '127.0.0.1:9094').producer();
  await producer.connect();
  try {
    await producer.send({ topic: topicNames('switchyard.').ingest, messages: [{ key: 'not-a-call', value: Buffer.from('not an Avro record') }] });
  } finally {
    await producer.disconnect();
  }
}

function readinessProbe(d: KubeObject): { path: string; port: number } {
  const container = (d.spec!.template!.spec as { containers: Array<{ ports?: Array<{ name: string; containerPort: number }>; readinessProbe?: { httpGet?: { path: string; port: string | number } } }> }).containers[0]!;
  const get = container.readinessProbe?.httpGet;
  assert.ok(get, `${d.metadata.name} has no httpGet readinessProbe`);
  const port = typeof get.port === 'number' ? get.port : container.ports?.find((p) => p.name === get.port)?.containerPort;
  assert.ok(port, `${d.metadata.name}'s readinessProbe names port ${get.port}, which its container does not declare`);
  return { path: get.path, port };
}
