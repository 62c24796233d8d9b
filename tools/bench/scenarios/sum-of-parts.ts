// End to end against the sum of its parts: the rate the machine's cores could reach if every event
// cost only what the bare parts measured in the same run spend on it — (c) (node:http → Kafka), the
// bare fan-out (consume → transactional produce), the bare consumer and the bare undici client —
// plus what the bench's own generator and receiver spend per event in the end-to-end rounds. The
// broker's and the registry's CPU are not in the ceiling (the bare parts use the broker too, and
// its cost is reported beside it).
import { availableParallelism } from 'node:os';
import { round, type Row } from '../report.js';

/** CPU time per event of each part, µs. */
export interface PartsCpu { bareIngestUs: number; bareFanoutUs: number; bareConsumeUs: number; bareClientUs: number; benchUs: number }

/** The cores this process may run on: its CPU affinity (`taskset -c 0 npm run bench` gives 1), as libuv counts them. */
export const coresAvailable = (): number => availableParallelism();

export function sumOfPartsRow(input: { rate: number; cores: number; parts: PartsCpu; verified: boolean; brokerUs?: number }): Row {
  const { rate, cores, parts, verified, brokerUs } = input;
  const usPerEvent = parts.bareIngestUs + parts.bareFanoutUs + parts.bareConsumeUs + parts.bareClientUs + parts.benchUs;
  const ceiling = (cores * 1e6) / usPerEvent;
  const ratio = rate / ceiling;
  return {
    scenario: 'end to end vs the sum of its parts', value: rate, unit: 'delivered/s', baseline: { name: 'ceiling', value: ceiling }, ratio, target: '≥ 0.9', met: ratio >= 0.9,
    verified: verified && Number.isFinite(ceiling),
    details: {
      cores, partsUsPerEvent: usPerEvent,
      parts: `(c) ${round(parts.bareIngestUs)}, fan-out ${round(parts.bareFanoutUs)}, consume ${round(parts.bareConsumeUs)}, client ${round(parts.bareClientUs)}, bench ${round(parts.benchUs)} µs`,
      ...(brokerUs !== undefined && Number.isFinite(brokerUs) ? { e2eBrokerUs: brokerUs, ceilingWithBroker: (cores * 1e6) / (usPerEvent + brokerUs) } : {}),
    },
    rssMb: {},
  };
}
