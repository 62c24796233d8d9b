// The fanout service: Reads the ingest topic and writes one delivery task per enabled webhooks destination.
// Composition root: the only place that reads the environment and wires I/O.
import { z } from 'zod';
import { loadConfig, commonEnv, env } from '@switchyard/platform/config';
import { connectPipeline } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';

const configSchema = z.object({
  ...commonEnv,
  FANOUT_PORT: env.port(8082),
});

runMain('fanout', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'fanout', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.FANOUT_PORT);
  await connectPipeline(runtime, config, ['io.switchyard.pipeline.DeliveryTask', 'io.switchyard.pipeline.InvalidEvent']);
});
