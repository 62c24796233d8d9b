// One pipeline of real service processes for the fault suites, each service restartable on its
// own port (the load keeps sending to the same ingest address), and a scenario's own source,
// destination and receiver, proven wired end to end by a probe before any load is sent.
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { configKey, type Audience, type Destination, type Source } from '@switchyard/platform/config-view/config-state';
import { createProducer } from '@switchyard/platform/kafka/client';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeDestination, makeSource, writeConfig } from './config.js';
import { FaultReceiver, type FaultReceiverOptions } from './fault-receiver.js';
import { startService, type RunningService } from './services.js';
import { testKafka, testStack } from './stack.js';

/** A service process of the pipeline: `delivery-main` and `delivery-retries` are the two halves of DELIVERY_READS. */
export type Role = 'ingest' | 'fanout' | 'delivery' | 'delivery-main' | 'delivery-retries' | 'audiences';

const serviceOf = (role: Role) => (role.startsWith('delivery') ? 'delivery' : role);
const extraEnv = (role: Role): NodeJS.ProcessEnv =>
  role === 'delivery-main' ? { DELIVERY_READS: 'main' } : role === 'delivery-retries' ? { DELIVERY_READS: 'retries' } : {};

export class FaultPipeline {
  readonly running = new Map<Role, RunningService>();
  readonly topics: ReturnType<typeof topicNames>;

  constructor(readonly prefix: string, readonly env: NodeJS.ProcessEnv) {
    this.topics = topicNames(prefix);
  }

  async start(roles: Role[]): Promise<void> {
    await Promise.all(roles.map(async (role) => this.running.set(role, await startService(serviceOf(role), { ...this.env, ...extraEnv(role) }))));
  }

  get ingestUrl(): string {
    return this.running.get('ingest')!.url;
  }

  /** Stops a service with the signal (it must exit as a signalled process would) and starts it again on the same port. */
  async restart(role: Role, signal: NodeJS.Signals): Promise<number | string> {
    const svc = this.running.get(role)!;
    const exit = await svc.stop(signal);
    this.running.set(role, await startService(serviceOf(role), { ...this.env, ...extraEnv(role) }, svc.port));
    return exit;
  }

  async stop(): Promise<void> {
    await Promise.all([...this.running.values()].map((s) => s.stop()));
  }

  /**
   * A source, a destination and its receiver of their own (optionally an audience), written to the
   * config topic; resolves once a probe event went through ingest, fan-out and delivery.
   */
  async scenario(label: string, receiverOpts: FaultReceiverOptions = {}, audience?: Omit<Audience, 'id' | 'sourceId' | 'createdAt' | 'updatedAt'>): Promise<{ source: Source; destination: Destination; receiver: FaultReceiver; audience?: Audience }> {
    const receiver = await new FaultReceiver(receiverOpts).start();
    const source = makeSource();
    const destination = makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {} }] });
    await writeConfig(this.prefix, { sources: [source], destinations: [destination] });
    let made: Audience | undefined;
    if (audience) {
      const now = Date.now();
      made = { id: `aud_${label.replace(/\W/g, '_')}_${now}`, sourceId: source.id, createdAt: now, updatedAt: now, ...audience };
      await writeAudience(this.prefix, made);
    }
    const auth = `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}`;
    const probe = `${label}-probe`;
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (Date.now() > deadline) throw new Error(`${label}: the probe was not delivered within 60 s`);
      if (receiver.deliveredCount(probe) > 0) break;
      try {
        const res = await fetch(`${this.ingestUrl}/v1/track`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'probe', event: 'Probe', messageId: probe }) });
        await res.arrayBuffer();
        if (res.ok) await waitUntil(() => receiver.deliveredCount(probe) > 0, 10_000);
      } catch { /* not there yet */ }
      await sleep(300);
    }
    return { source, destination, receiver, audience: made };
  }
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/** Writes an audience definition to the config topic, as the control service would. */
export async function writeAudience(prefix: string, audience: Audience): Promise<void> {
  const codec = new AvroCodec({ registryUrl: testStack().registryUrl });
  await codec.register(['io.switchyard.config.Audience']);
  const producer = createProducer(testKafka('audience-writer'));
  await producer.connect();
  try {
    await producer.send({ topic: topicNames(prefix).config, acks: -1, messages: [{ key: configKey.audience(audience.id), value: codec.encode('io.switchyard.config.Audience', audience) }] });
  } finally {
    await producer.disconnect();
  }
}
