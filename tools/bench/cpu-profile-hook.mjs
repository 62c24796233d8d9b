// Preloaded into each service by `npm run bench -- --profile` (NODE_OPTIONS=--import …; Node 20
// refuses --cpu-prof in NODE_OPTIONS): starts the V8 CPU profiler and writes a .cpuprofile into
// BENCH_PROFILE_DIR when the process exits. The inspector session is in-thread, so posting
// Profiler.stop from the exit handler completes synchronously.
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 1000 });
  session.post('Profiler.start');
  const name = (process.argv[1] ?? 'node').split('/').slice(-3, -2)[0] ?? 'node';
  process.on('exit', () => {
    session.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
