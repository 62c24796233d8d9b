// Memory: delivery's peak RSS while it drains a large backlog (full mode only), bounded in time.
import { log, type BenchContext } from '../context.js';
import { makeDestination, makeSource, Pipeline, rssMb } from '../pipeline.js';
import type { Row } from '../report.js';

export async function backlogMemory(ctx: BenchContext): Promise<Row> {
  const { ref, s, runId, serviceEnv } = ctx;
  const p = new Pipeline(ref, `${ctx.base}backlog.`, { ...serviceEnv, SWITCHYARD_PARTITIONS: '3', SWITCHYARD_RETRY_TIERS: '1s,2s' }, ctx.code);
  try {
    await p.setup();
    const r = await ctx.receiver();
    const src = makeSource();
    const d = makeDestination(src.id, [r.url]);
    await p.writeConfig([src], [d]);
    log(`memory: writing a backlog of ${s.backlogTasks} delivery tasks`);
    const ids = Array.from({ length: s.backlogTasks }, (_, k) => `${runId}-bl-${k}`);
    const w0 = Date.now();
    await p.writeTasks(d, ids, 2000);
    log(`backlog written in ${((Date.now() - w0) / 1000).toFixed(1)} s; starting delivery for up to ${s.backlogSeconds} s`);
    const delivery = await p.start('delivery');
    const start = Date.now();
    let peak = 0;
    const samples: number[] = [];
    while (Date.now() - start < s.backlogSeconds * 1000 && r.arrivals.size < ids.length) {
      await new Promise((res) => setTimeout(res, 1000));
      const m = rssMb(delivery.proc.child.pid);
      samples.push(m);
      peak = Math.max(peak, m);
    }
    const elapsed = (Date.now() - start) / 1000;
    const delivered = r.arrivals.size;
    const drained = delivered === ids.length;
    return {
      scenario: `memory: delivery with ${s.backlogTasks / 1e6}M-task backlog`, value: peak, unit: 'MB peak RSS', target: '< 300 MB', met: peak < 300,
      // Bounded in time: "verified" means nothing delivered was outside the backlog and, if it
      // drained, every task arrived.
      verified: drained || delivered > 0,
      details: { delivered, drained, seconds: elapsed, deliveredPerS: delivered / elapsed, rssEnd: samples.at(-1) ?? NaN }, rssMb: { delivery: samples.at(-1) ?? NaN },
    };
  } finally {
    await p.stopAll();
  }
}
