// CPU time read from /proc: one process's (any process, by pid) and the whole machine's.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`; 100 on Linux nearly always). */
let clockTicks: number | undefined;
export function clkTck(): number {
  if (clockTicks === undefined) {
    try { clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100; } catch { clockTicks = 100; }
  }
  return clockTicks;
}

/** A process's CPU time so far (user + system, every thread), in ms, from /proc/<pid>/stat; NaN elsewhere. */
export function processCpuMs(pid: number | undefined): number {
  if (!pid) return NaN;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces), from field 3: utime is field 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clkTck();
  } catch {
    return NaN;
  }
}

/** The whole machine's CPU time so far, in ms over all cores (/proc/stat): busy (everything but idle and iowait) and steal (taken by the hypervisor). */
export function machineCpuMs(): { busyMs: number; stealMs: number } {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal …
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busyMs: ((total - f[3]! - f[4]!) * 1000) / clkTck(), stealMs: (f[7]! * 1000) / clkTck() };
  } catch {
    return { busyMs: NaN, stealMs: NaN };
  }
}
