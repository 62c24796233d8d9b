// The ingest service: Receives calls over HTTP and writes them to the ingest topic.
// Composition root: the only place that reads the environment and wires I/O.
import { z } from 'zod';
import { loadConfig, commonEnv, env } from '@switchyard/platform/config';
import { connectPipeline } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';

const configSchema = z.object({
  ...commonEnv,
  INGEST_PORT: env.port(8080),
});

runMain('ingest', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'ingest', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.INGEST_PORT);
  await connectPipeline(runtime, config, ['io.switchyard.event.Track', 'io.switchyard.event.Page', 'io.switchyard.event.Screen', 'io.switchyard.event.Identify', 'io.switchyard.event.Group', 'io.switchyard.event.Alias', 'io.switchyard.pipeline.InvalidEvent']);
});
