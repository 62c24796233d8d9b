// A scenario's result (one row of the table and of the JSON) and the table printed from the rows.
import { median } from './load.js';

export interface Row {
  scenario: string;
  /** The headline figure and its unit. */
  value: number; unit: string;
  baseline?: { name: string; value: number };
  ratio?: number;
  target?: string;
  met?: boolean;
  /** Every sent event arrived (by messageId). */
  verified: boolean;
  details: Record<string, unknown>;
  rssMb: Record<string, number>;
}

export const round = (n: number, d = 0) => (Number.isFinite(n) ? Math.round(n * 10 ** d) / 10 ** d : n);
/** A hop as p50/p99 ms. */
export const hop = (q: { p50: number; p99: number }) => `${round(q.p50)}/${round(q.p99)}`;

/** Each service's CPU per event (µs, the medians of rounds) as "name alone/beside", from Chain.saturate's `cpuPerEvent`. */
export function cpuAloneVsBeside(alone: Array<Record<string, number>>, beside: Array<Record<string, number>>): string {
  return Object.keys(alone[0] ?? {}).map((k) => `${k.replace('CpuUs', '')} ${round(median(alone.map((c) => c[k]!)))}/${round(median(beside.map((c) => c[k]!)))}`).join(', ');
}

export function formatTable(rows: Row[]): string {
  const head = ['scenario', 'result', 'baseline', 'ratio', 'target', 'met', 'all arrived', 'notes'];
  const body = rows.map((r) => [
    r.scenario,
    `${round(r.value, r.value < 10 ? 2 : 0)} ${r.unit}`,
    r.baseline ? `${r.baseline.name} ${round(r.baseline.value, r.baseline.value < 10 ? 2 : 0)}` : '',
    r.ratio === undefined ? '' : r.ratio.toFixed(2),
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : 'NO',
    r.verified ? 'yes' : 'NO',
    [notes(r.details), Object.entries(r.rssMb).map(([k, v]) => `${k} ${round(v)}MB`).join(' ')].filter(Boolean).join('; '),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

/** A row's details as notes; keys starting with `_` are for the JSON only. */
function notes(d: Record<string, unknown>): string {
  return Object.entries(d).filter(([k]) => !k.startsWith('_')).map(([k, v]) => `${k} ${typeof v === 'number' ? round(v, v < 10 ? 2 : 0) : String(v)}`).join(', ');
}
