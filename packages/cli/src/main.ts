// The `switchyard` executable: the only place that touches the real process.
import { run } from './run.js';

// A reader that stops early (`switchyard sources list | head -1`) is not a failure of ours.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE') throw err;
  process.exit();
});

// exitCode rather than process.exit(), so output piped to another program is flushed first.
process.exitCode = await run(process.argv.slice(2));
