// How much each scenario sends in each mode: tiny (the test suite's run), quick, full.
import type { Mode } from './options.js';

export interface Sizes {
  rawMessages: number; postRequests: number; postConcurrency: number;
  ingestRequests: number; batchSize: number; ingestConcurrency: number;
  e2eEvents: number; slowCap: number; slowTasks: number;
  /**
   * Latency against rate: open-loop loads at these rates ('half' = 50 % of the measured saturation rate), each of so many events.
   * `oneCall`: one call per request whatever the rate, as browsers and unbatched clients send (else Chain.paced batches from 100/s).
   */
  latencyRates: Array<{ rate: number | 'half'; events: number; oneCall?: true }>;
  isolationEvents: number; stormMs: number; stormEvents: number; backlogTasks: number; backlogSeconds: number;
  /** Delivery CPU per task: tasks drained before measuring (JIT, connections), then the measured tasks. */
  cpuWarmTasks: number; cpuTasks: number;
  /** Fan-out CPU per event: events drained before measuring (JIT, connections), then the measured events, per round (fan-out and the bare fan-out each drain them). */
  fanoutWarmEvents: number; fanoutEvents: number;
  /** Horizontal throughput: tasks per delivery instance in each measured drain (1, 2, 3 instances drain 1×, 2×, 3× this). */
  horizontalTasks: number;
  deliverTimeoutMs: number;
  /** Paired rounds of each ratio row (baseline and subject run back to back, alternating order): the row reports the median ratio. */
  rounds: number;
  /**
   * Rounds of the isolation rows, which compare two saturation rates of a few seconds each: their
   * rounds ranged ±20 % on this machine, so the median of three could miss by one bad round.
   */
  isolationRounds: number;
  /** Idle: how long the stack runs without traffic before its CPU is read and the first call is sent. */
  idleSeconds: number;
  /** Idle: from the warm-up call to the window's start (its own work, commits and writers, is not idling; nor is the fresh broker's JIT). */
  idleSettleSeconds: number;
  /** Many destinations: the configurations measured (destinations; half as many sources), events per load, destinations created or changed. */
  manyLevels: number[]; manyEvents: number; manyChanges: number;
  /** Failover: the steady load (calls/s, batches of 10), each phase's length and when in it the fault comes (s), and the rounds of the three faults. */
  failoverCallsPerS: number; failoverSeconds: number; failoverFaultAtS: number; failoverRounds: number;
}

export const SIZES: Record<Mode, Sizes> = {
  tiny: { rawMessages: 2000, postRequests: 1000, postConcurrency: 50, ingestRequests: 200, batchSize: 10, ingestConcurrency: 8, e2eEvents: 300, latencyRates: [{ rate: 5, events: 10 }, { rate: 50, events: 50 }, { rate: 500, events: 200 }, { rate: 'half', events: 200 }, { rate: 200, events: 100, oneCall: true }, { rate: 1000, events: 200, oneCall: true }], slowCap: 20, slowTasks: 200, isolationEvents: 300, stormMs: 2000, stormEvents: 100, backlogTasks: 0, backlogSeconds: 0, cpuWarmTasks: 500, cpuTasks: 2000, fanoutWarmEvents: 500, fanoutEvents: 3000, horizontalTasks: 200, deliverTimeoutMs: 30_000, rounds: 1, isolationRounds: 1, idleSeconds: 2, idleSettleSeconds: 1, manyLevels: [20, 100], manyEvents: 200, manyChanges: 2, failoverCallsPerS: 100, failoverSeconds: 20, failoverFaultAtS: 4, failoverRounds: 1 },
  quick: { rawMessages: 50_000, postRequests: 10_000, postConcurrency: 200, ingestRequests: 300, batchSize: 20, ingestConcurrency: 32, e2eEvents: 6000, latencyRates: [{ rate: 5, events: 50 }, { rate: 50, events: 500 }, { rate: 500, events: 2500 }, { rate: 'half', events: 4000 }, { rate: 200, events: 2000, oneCall: true }, { rate: 1000, events: 5000, oneCall: true }], slowCap: 200, slowTasks: 3000, isolationEvents: 3000, stormMs: 5000, stormEvents: 1000, backlogTasks: 0, backlogSeconds: 0, cpuWarmTasks: 5000, cpuTasks: 30_000, fanoutWarmEvents: 3000, fanoutEvents: 15_000, horizontalTasks: 3000, deliverTimeoutMs: 60_000, rounds: 2, isolationRounds: 2, idleSeconds: 20, idleSettleSeconds: 10, manyLevels: [100, 2000, 20_000], manyEvents: 6000, manyChanges: 20, failoverCallsPerS: 500, failoverSeconds: 40, failoverFaultAtS: 10, failoverRounds: 1 },
  full: { rawMessages: 300_000, postRequests: 50_000, postConcurrency: 200, ingestRequests: 2000, batchSize: 20, ingestConcurrency: 32, e2eEvents: 40_000, latencyRates: [{ rate: 5, events: 300 }, { rate: 50, events: 1000 }, { rate: 500, events: 5000 }, { rate: 'half', events: 20_000 }, { rate: 200, events: 6000, oneCall: true }, { rate: 1000, events: 20_000, oneCall: true }], slowCap: 200, slowTasks: 15_000, isolationEvents: 20_000, stormMs: 30_000, stormEvents: 10_000, backlogTasks: 1_000_000, backlogSeconds: 120, cpuWarmTasks: 10_000, cpuTasks: 100_000, fanoutWarmEvents: 10_000, fanoutEvents: 100_000, horizontalTasks: 10_000, deliverTimeoutMs: 300_000, rounds: 3, isolationRounds: 5, idleSeconds: 60, idleSettleSeconds: 30, manyLevels: [100, 2000, 20_000], manyEvents: 20_000, manyChanges: 100, failoverCallsPerS: 500, failoverSeconds: 50, failoverFaultAtS: 10, failoverRounds: 3 },
};
