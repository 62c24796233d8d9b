// What every scenario is given: the stack, the sizes of this mode, the run's id and topic prefix,
// the services' extra environment, the Kafka processes this run started, a receiver factory whose
// receivers close at the end of the run, and the run's clean-ups.
import type { ServiceCode } from '../stack/services.js';
import type { StackRef } from './pipeline.js';
import type { BenchReceiver, ReceiverMode } from './receiver.js';
import type { Sizes } from './sizes.js';

export interface BenchContext {
  ref: StackRef;
  s: Sizes;
  runId: string;
  /** The topic prefix of this run (`bench.<runId>.`); each pipeline adds its own part. */
  base: string;
  /** Extra environment of every service process (e.g. NODE_OPTIONS for --profile). */
  serviceEnv: NodeJS.ProcessEnv;
  /** The services run built (`npm run build`, plain node, as the container runs them), or from source through tsx (--source). */
  code: ServiceCode;
  /** --task-hops: the latency rows also read the delivery topic and split fan-out → delivery (hops.ts). */
  taskHops: boolean;
  /** The Kafka processes this run started (none on a reused stack), whose CPU some rows report. */
  brokerPids: number[];
  /** The schema registry this run started (none on a reused stack). */
  registryPid?: number;
  /** A receiver closed when the run ends. */
  receiver(mode?: ReceiverMode): Promise<BenchReceiver>;
  /** Run in reverse order when the run ends, failed or not. */
  cleanups: Array<() => Promise<unknown>>;
}

export const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
