// Starts Switchyard programs for stack-level tests: setup once per topic prefix, then services on
// free ports, each stopped by the test.
import { freePort } from '../../tools/stack/ports.js';
import { runOnce, spawnService, waitForHttp, type ServiceProcess } from '../../tools/stack/services.js';
import { testStack } from './stack.js';

export interface RunningService {
  url: string;
  port: number;
  proc: ServiceProcess;
  stop(signal?: NodeJS.Signals): Promise<number | string>;
}

/** The environment every program of one test pipeline shares. */
export function pipelineEnv(prefix: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const { brokers, registryUrl } = testStack();
  return { KAFKA_BROKERS: brokers, SCHEMA_REGISTRY_URL: registryUrl, SWITCHYARD_TOPIC_PREFIX: prefix, SWITCHYARD_PARTITIONS: '3', LOG_LEVEL: 'info', ...extra };
}

export async function setupTopics(env: NodeJS.ProcessEnv): Promise<void> {
  await runOnce('setup', { env });
}

const portVars: Record<string, string> = { control: 'CONTROL_PORT', ingest: 'INGEST_PORT', fanout: 'FANOUT_PORT', delivery: 'DELIVERY_PORT', audiences: 'AUDIENCES_PORT' };

export async function startService(name: string, env: NodeJS.ProcessEnv, port?: number): Promise<RunningService> {
  const p = port ?? (await freePort());
  const proc = spawnService(name, { env: { ...env, [portVars[name]!]: String(p) }, echo: process.env.TEST_ECHO === '1' });
  const url = `http://127.0.0.1:${p}`;
  try {
    await waitForHttp(`${url}/readyz`, 60_000, proc);
  } catch (err) {
    await proc.stop('SIGKILL');
    throw err;
  }
  return { url, port: p, proc, stop: (signal = 'SIGTERM') => proc.stop(signal) };
}

/** count instances of one service, each on a free port of its own, started side by side. */
export async function startInstances(name: string, env: NodeJS.ProcessEnv, count: number): Promise<RunningService[]> {
  const started = await Promise.allSettled(Array.from({ length: count }, () => startService(name, env)));
  const running = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await Promise.all(running.map((s) => s.stop('SIGKILL')));
    throw failed.reason;
  }
  return running;
}
