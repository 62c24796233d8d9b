// A bare program draining a backlog in its own process (bare-fanout.ts, bare-consume.ts): its
// process CPU time (/proc/<pid>/stat) from the line saying its warm-up records are done to the JSON
// line saying every record is, divided by the records read in between.
import { createInterface } from 'node:readline';
import { processCpuMs } from './cpu-time.js';
import { spawnBenchProgram } from './pipeline.js';

export interface BareDrain {
  /** CPU time per record after the warm-up, µs. */
  usPerRecord: number;
  /** Records read after the warm-up, and their rate. */
  records: number; perS: number;
  /** Exited 0 having read exactly `total` records (and, when it reports them, produced as many). */
  ok: boolean;
}

export async function runBareDrain(file: string, env: NodeJS.ProcessEnv, total: number, timeoutMs: number): Promise<BareDrain> {
  const child = spawnBenchProgram(file, env);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  let from: { cpuMs: number; at: number; records: number } | undefined;
  let to: { cpuMs: number; at: number; records: number; produced?: number } | undefined;
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      const cpuMs = processCpuMs(child.pid);
      const at = Date.now();
      if (line.startsWith('warm ')) from = { cpuMs, at, records: Number(line.slice(5)) };
      else if (line.startsWith('{')) to = { cpuMs, at, ...(JSON.parse(line) as { records: number; produced?: number }) };
    }
  } finally {
    clearTimeout(timer);
  }
  const code = await exited;
  const start = from ?? { cpuMs: 0, at: NaN, records: 0 };
  const records = to ? to.records - start.records : 0;
  return {
    usPerRecord: to && records > 0 ? ((to.cpuMs - start.cpuMs) * 1000) / records : NaN,
    records, perS: to ? records / Math.max(0.001, (to.at - start.at) / 1000) : NaN,
    ok: code === 0 && to !== undefined && to.records === total && (to.produced === undefined || to.produced === to.records),
  };
}
