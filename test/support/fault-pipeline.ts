// One pipeline of real service processes for the fault suites: any number of instances of each
// service, each restartable on its own port (the load keeps sending to the same ingest addresses),
// paused and resumed, added and removed; and a scenario's own source, destination and receiver,
// proven wired end to end by a probe before any load is sent.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { configKey, type Audience, type Destination, type Source } from '@switchyard/platform/config-view/config-state';
import { createProducer } from '@switchyard/platform/kafka/client';
import { topicNames } from '@switchyard/platform/kafka/topics';
import { makeDestination, makeSource, writeConfig } from './config.js';
import { FaultReceiver, type FaultReceiverOptions } from './fault-receiver.js';
import { metricTotal } from './metrics.js';
import { startService, type RunningService } from './services.js';
import { testKafka, testStack } from './stack.js';

/** A service process of the pipeline: `delivery-main` and `delivery-retries` are the two halves of DELIVERY_READS. */
export type Role = 'ingest' | 'fanout' | 'delivery' | 'delivery-main' | 'delivery-retries' | 'audiences';

const serviceOf = (role: Role) => (role.startsWith('delivery') ? 'delivery' : role);
const extraEnv = (role: Role): NodeJS.ProcessEnv =>
  role === 'delivery-main' ? { DELIVERY_READS: 'main' } : role === 'delivery-retries' ? { DELIVERY_READS: 'retries' } : {};

/** One instance of a role. A slot keeps its port across restarts: a replacement of slot k listens where the old one did. */
interface Slot {
  svc: RunningService;
  env: NodeJS.ProcessEnv;
  /** Being stopped gracefully: no longer given new calls (a Kubernetes endpoint removed before SIGTERM). */
  draining: boolean;
  paused: boolean;
}

/**
 * An exit other than 0 with what the instance logged last of its worst (a failed shutdown step, else
 * errors, else warnings), so that a failed assertion on exits says what went wrong (CI keeps only
 * the test output).
 */
function explained(role: Role, index: number, svc: RunningService, exit: number | string): number | string {
  if (exit === 0 || exit === 'SIGKILL') return exit;
  // A failed shutdown step ("close failed") or a fatal error first, then errors, then warnings:
  // kafkajs logs many of both during faults.
  const first = [/"msg":"close failed"|"level":"fatal"/, /"level":"error"/, /"level":"warn"/]
    .map((pattern) => svc.proc.output.filter((line) => pattern.test(line)))
    .find((found) => found.length) ?? [];
  const lines = first.slice(-6).map((line) => line.slice(0, 400));
  return `${exit} (${role} #${index + 1}): ${lines.join('\n') || 'no warning or error logged'}`;
}

export class FaultPipeline {
  private readonly slots = new Map<Role, Slot[]>();
  private turn = 0;
  readonly topics: ReturnType<typeof topicNames>;

  constructor(readonly prefix: string, readonly env: NodeJS.ProcessEnv) {
    this.topics = topicNames(prefix);
  }

  /** One instance of each role, or `count` instances of each role given with a count. */
  async start(roles: Role[] | Partial<Record<Role, number>>): Promise<void> {
    const counts: Array<[Role, number]> = Array.isArray(roles) ? roles.map((r) => [r, 1]) : (Object.entries(roles) as Array<[Role, number]>);
    await Promise.all(counts.map(([role, n]) => this.scale(role, n)));
  }

  /** The running instances of a role, in slot order. */
  instances(role: Role): RunningService[] {
    return (this.slots.get(role) ?? []).map((s) => s.svc);
  }

  /** An ingest instance that is not being stopped, round robin: a load balancer in front of the ingest replicas. */
  get ingestUrl(): string {
    const all = this.slots.get('ingest') ?? [];
    const open = all.filter((s) => !s.draining && !s.paused);
    const pick = (open.length ? open : all)[this.turn++ % Math.max(1, (open.length ? open : all).length)];
    if (!pick) throw new Error('no ingest instance');
    return pick.svc.url;
  }

  /** Stops instance `index` of a role with the signal (it must exit as a signalled process would) and starts it again on the same port. */
  async restart(role: Role, signal: NodeJS.Signals, index = 0): Promise<number | string> {
    const slot = this.slot(role, index);
    // A graceful stop takes the instance out of the load balancer first; a crash does not.
    slot.draining = signal !== 'SIGKILL';
    if (slot.paused) this.resume(role, index);
    const exit = explained(role, index, slot.svc, await slot.svc.stop(signal));
    slot.svc = await startService(serviceOf(role), slot.env, slot.svc.port);
    slot.draining = false;
    return exit;
  }

  /**
   * Scales a role to `count` instances: new slots are started side by side (each ready: its
   * consumer joined its group); surplus ones, the last first, are stopped with the signal one after
   * another. Resolves with the exits of the stopped ones.
   */
  async scale(role: Role, count: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<Array<number | string>> {
    const slots = this.slots.get(role) ?? [];
    this.slots.set(role, slots);
    const exits: Array<number | string> = [];
    while (slots.length > count) {
      const slot = slots[slots.length - 1]!;
      slot.draining = true;
      if (slot.paused) this.resume(role, slots.length - 1);
      exits.push(explained(role, slots.length - 1, slot.svc, await slot.svc.stop(signal)));
      slots.pop();
    }
    const added = await Promise.allSettled(Array.from({ length: Math.max(0, count - slots.length) }, async () => {
      const env = { ...this.env, ...extraEnv(role) };
      return { svc: await startService(serviceOf(role), env), env, draining: false, paused: false };
    }));
    for (const r of added) if (r.status === 'fulfilled') slots.push(r.value);
    const failed = added.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    return exits;
  }

  /** SIGSTOP: the instance is frozen (a long GC pause, a starved node); its sockets stay open. */
  pause(role: Role, index = 0): void {
    const slot = this.slot(role, index);
    slot.svc.proc.child.kill('SIGSTOP');
    slot.paused = true;
  }

  /** SIGCONT: the frozen instance runs on from where it stood. */
  resume(role: Role, index = 0): void {
    const slot = this.slot(role, index);
    slot.svc.proc.child.kill('SIGCONT');
    slot.paused = false;
  }

  /**
   * Attempts of a destination that delivery's running instances counted as timed out (an instance
   * restarted since counts from then). Each may be sent again by design: its outcome is unknown to
   * delivery, and at least once means sending it again. On two loaded cores an answer written in time
   * can still be read after delivery's timer fired (a registry's JVM starting up starves every
   * process for seconds), which the receiver cannot see (FaultReceiver.accepted).
   */
  async deliveryTimeouts(destinationId: string): Promise<number> {
    const urls = [...this.slots].filter(([role]) => serviceOf(role) === 'delivery').flatMap(([, slots]) => slots.map((s) => s.svc.url));
    return metricTotal(urls, 'delivery_attempts_total', { destination: destinationId, status_class: 'timeout' });
  }

  private slot(role: Role, index: number): Slot {
    const slot = this.slots.get(role)?.[index];
    if (!slot) throw new Error(`no instance ${index} of ${role}`);
    return slot;
  }

  async stop(): Promise<void> {
    const all = [...this.slots.values()].flat();
    // A stopped process would not act on SIGTERM until continued.
    for (const s of all) if (s.paused) { s.svc.proc.child.kill('SIGCONT'); s.paused = false; }
    await Promise.all(all.map((s) => s.svc.stop()));
  }

  /**
   * A source, a destination and its receiver of their own (optionally an audience), written to the
   * config topic; resolves once a probe event through each ingest instance went through fan-out and delivery.
   */
  async scenario(label: string, receiverOpts: FaultReceiverOptions = {}, audience?: Omit<Audience, 'id' | 'sourceId' | 'createdAt' | 'updatedAt'>): Promise<{ source: Source; destination: Destination; receiver: FaultReceiver; audience?: Audience }> {
    const receiver = await new FaultReceiver(receiverOpts).start();
    const source = makeSource();
    // Standard Webhooks on: each request carries when delivery started it (webhook-timestamp), so
    // the receiver can tell a call it answered after the sender had given up (FaultReceiver.accepted).
    const now = Date.now();
    const signingSecrets = [{ id: `whk_${label}`, secret: `whsec_${randomBytes(32).toString('base64')}`, createdAt: now, expiresAt: null }];
    const destination = makeDestination(source.id, { webhooks: [{ url: receiver.url, headers: {}, clientCertificate: null }], standardSignatures: true, signingSecrets });
    await writeConfig(this.prefix, { sources: [source], destinations: [destination] });
    let made: Audience | undefined;
    if (audience) {
      made = { id: `aud_${label.replace(/\W/g, '_')}_${now}`, sourceId: source.id, createdAt: now, updatedAt: now, ...audience };
      await writeAudience(this.prefix, made);
    }
    const auth = `Basic ${Buffer.from(`${source.writeKeys[0]}:`).toString('base64')}`;
    // One probe through each ingest instance (the first through the first): every one of them knows
    // the new source before the load starts, and its records went through fan-out and delivery.
    const urls = (this.slots.get('ingest') ?? []).map((s) => s.svc.url);
    const deadline = Date.now() + 60_000;
    for (const [k, url] of (urls.length ? urls : [this.ingestUrl]).entries()) {
      const probe = k === 0 ? `${label}-probe` : `${label}-probe-${k + 1}`;
      for (;;) {
        if (Date.now() > deadline) throw new Error(`${label}: the probe through ${url} was not delivered within 60 s`);
        if (receiver.deliveredCount(probe) > 0) break;
        try {
          const res = await fetch(`${url}/v1/track`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ userId: 'probe', event: 'Probe', messageId: probe }) });
          await res.arrayBuffer();
          if (res.ok) await waitUntil(() => receiver.deliveredCount(probe) > 0, 10_000);
        } catch { /* not there yet */ }
        await sleep(300);
      }
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
