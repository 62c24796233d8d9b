// A three-node Kafka cluster of its own for a fault suite or the failover bench (combined KRaft
// broker+controller nodes, kafka.ts), whose nodes can be killed, stopped and started again with the same
// config and data, and which says who leads what: the broker leading most partitions of some
// topics, and the active KRaft controller.
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createKafka, type Admin } from '@switchyard/platform/kafka/client';
import { createLogger } from '@switchyard/platform/logger';
import { nodeDir, startKafka, startKafkaCluster, type KafkaAddress, type RunningKafka } from './kafka.js';
import { freeKafkaAddresses } from './ports.js';

export interface FaultClusterOptions {
  libs: string;
  dir: string;
  /** Nodes of the cluster (default 3). */
  size?: number;
  /** Maximum heap of each node. */
  heap?: string;
  /** More server.properties lines of every node (kafka.ts). */
  properties?: string[];
}

/** Clusters not closed yet: their JVMs are killed if the test process ends first (a file timeout, Ctrl-C). */
const open = new Set<FaultCluster>();
let hooked = false;
function killLeftoversOnExit(): void {
  if (hooked) return;
  hooked = true;
  // A node JVM runs in a process group of its own (spawnManaged): nothing else would stop it.
  const killAll = () => { for (const c of open) c.killNow(); };
  process.once('exit', killAll);
  for (const [sig, code] of [['SIGTERM', 143], ['SIGINT', 130]] as const) process.once(sig, () => { killAll(); process.exit(code); });
}

export class FaultCluster {
  /** Node id i (1-based) at index i − 1; undefined while that node is down. */
  private readonly procs: Array<RunningKafka | undefined>;
  private admin: Admin | undefined;
  /** Restarts under way, by node id: a second restart of the same node waits for the first. */
  private readonly starting = new Map<number, Promise<void>>();

  private constructor(private readonly opts: FaultClusterOptions, private readonly addresses: KafkaAddress[], nodes: RunningKafka[], readonly brokers: string) {
    this.procs = [...nodes];
    open.add(this);
    killLeftoversOnExit();
  }

  /** SIGKILL of every node, synchronously (process exit). */
  killNow(): void {
    for (const p of this.procs) if (p) { try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ } }
  }

  static async start(opts: FaultClusterOptions): Promise<FaultCluster> {
    const addresses = await freeKafkaAddresses(opts.size ?? 3);
    const cluster = await startKafkaCluster({ libs: opts.libs, dir: opts.dir, nodes: addresses, heap: opts.heap, properties: opts.properties });
    return new FaultCluster(opts, addresses, cluster.nodes, cluster.brokers);
  }

  get nodeIds(): number[] {
    return this.addresses.map((_, i) => i + 1);
  }

  /** The nodes running now. */
  get up(): number[] {
    return this.nodeIds.filter((id) => this.procs[id - 1] !== undefined);
  }

  /** SIGKILL of node `id` (broker and controller at once). */
  async kill(id: number): Promise<void> {
    await this.procs[id - 1]?.kill();
    this.procs[id - 1] = undefined;
  }

  /** SIGTERM of node `id`: a controlled shutdown (leaders moved away first). */
  async stop(id: number): Promise<void> {
    await this.procs[id - 1]?.stop();
    this.procs[id - 1] = undefined;
  }

  /** Starts node `id` again with its config, storage and ports; resolves once it answers metadata requests. */
  async restart(id: number): Promise<void> {
    if (this.procs[id - 1]) return;
    let started = this.starting.get(id);
    if (!started) {
      started = startKafka({ libs: this.opts.libs, dir: nodeDir(this.opts.dir, id), heap: this.opts.heap, properties: this.opts.properties, nodeId: id, cluster: this.addresses, ...this.addresses[id - 1]! })
        .then((proc) => { this.procs[id - 1] = proc; })
        .finally(() => this.starting.delete(id));
      this.starting.set(id, started);
    }
    await started;
  }

  private async connected(): Promise<Admin> {
    if (!this.admin) {
      this.admin = createKafka({ brokers: this.brokers.split(','), clientId: 'fault-cluster', logger: createLogger({ service: 'fault-cluster', level: 'error' }) }).admin();
      await this.admin.connect();
    }
    return this.admin;
  }

  /** How many partitions of the topics each node leads. */
  async leaderCounts(topics: string[]): Promise<Map<number, number>> {
    const { topics: described } = await (await this.connected()).fetchTopicMetadata({ topics });
    const counts = new Map(this.nodeIds.map((id) => [id, 0]));
    for (const t of described) for (const p of t.partitions) counts.set(p.leader, (counts.get(p.leader) ?? 0) + 1);
    return counts;
  }

  /** The node leading most partitions of the topics (the lowest id on a tie), among those not in `exclude`. */
  async busiestLeader(topics: string[], exclude: number[] = []): Promise<{ id: number; counts: Map<number, number> }> {
    const counts = await this.leaderCounts(topics);
    const id = [...counts].filter(([n]) => !exclude.includes(n)).sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
    return { id, counts };
  }

  /**
   * The active KRaft controller. Not `admin.describeCluster().controller`: in KRaft mode a broker
   * answers that field with a random live broker (clients cannot reach the controllers; admin
   * requests are forwarded), which a check on this cluster confirmed (2, 3, 1, 1, 2, 3 in six calls).
   * kafkajs has no DescribeQuorum, so this reads each node's log: the active controller is the node
   * that logged "Becoming the active controller" with the highest epoch (a later election always
   * has a higher epoch).
   */
  activeController(): { id: number; epoch: number } | undefined {
    let best: { id: number; epoch: number } | undefined;
    for (const id of this.nodeIds) {
      const log = join(nodeDir(this.opts.dir, id), 'kafka.log');
      if (!existsSync(log)) continue;
      for (const m of readFileSync(log, 'utf8').matchAll(/Becoming the active controller at epoch (\d+)/g)) {
        const epoch = Number(m[1]);
        if (!best || epoch > best.epoch) best = { id, epoch };
      }
    }
    return best;
  }

  /**
   * When the active controller fenced broker `id` (its session timed out: broker.session.timeout.ms
   * without a heartbeat) after `since` (ms), read from the live nodes' logs; undefined if none did.
   * Log times are the JVM's local time, as Date's local-time constructor reads them.
   */
  fencedAt(id: number, since: number): number | undefined {
    for (const node of this.up) {
      const log = join(nodeDir(this.opts.dir, node), 'kafka.log');
      if (!existsSync(log)) continue;
      for (const m of readFileSync(log, 'utf8').matchAll(new RegExp(`^\\[(\\d+)-(\\d+)-(\\d+) (\\d+):(\\d+):(\\d+),(\\d+)\\] INFO \\[QuorumController id=\\d+\\] Fencing broker ${id} because its session has timed out`, 'gm'))) {
        const [y, mo, d, h, mi, sec, ms] = m.slice(1).map(Number) as [number, number, number, number, number, number, number];
        const at = new Date(y, mo - 1, d, h, mi, sec, ms).getTime();
        if (at >= since) return at;
      }
    }
    return undefined;
  }

  /** Waits until a controller other than `than` (epoch higher than `epoch`) is active; bounded. */
  async newController(than: { id: number; epoch: number }, timeoutMs = 60_000): Promise<{ id: number; epoch: number } | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const now = this.activeController();
      if (now && now.epoch > than.epoch) return now;
      await sleep(250);
    }
    return undefined;
  }

  /**
   * Waits (bounded) until every partition of every topic of the cluster (it is the suite's own:
   * Switchyard's topics and Kafka's internal ones) has all its replicas in sync again: a restarted
   * node has caught up. Resolves with how long it took.
   */
  async waitForFullIsr(timeoutMs = 120_000): Promise<number> {
    const t0 = Date.now();
    const deadline = t0 + timeoutMs;
    let behind = '';
    while (Date.now() < deadline) {
      try {
        const admin = await this.connected();
        const { topics: described } = await admin.fetchTopicMetadata({ topics: await admin.listTopics() });
        const short = described.flatMap((t) => t.partitions.filter((p) => p.isr.length < p.replicas.length).map((p) => `${t.name}/${p.partitionId} isr ${p.isr.join(',')}`));
        if (short.length === 0) return Date.now() - t0;
        behind = `${short.length} partitions, e.g. ${short.slice(0, 3).join('; ')}`;
      } catch (err) { behind = String(err); }
      await sleep(500);
    }
    throw new Error(`replicas not back in sync after ${timeoutMs} ms: ${behind}`);
  }

  /** Stops every node at once (a quorum member stopped after the others would wait for them) and the admin client. */
  async close(): Promise<void> {
    await this.admin?.disconnect().catch(() => undefined);
    this.admin = undefined;
    await Promise.all(this.procs.map((p) => p?.stop()));
    this.procs.fill(undefined);
    open.delete(this);
  }
}
