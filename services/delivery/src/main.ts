// The delivery service: Reads delivery tasks and POSTs them, signed, to the destination's webhooks.
// Composition root: the only place that reads the environment and wires I/O.
import { z } from 'zod';
import { loadConfig, commonEnv, env } from '@switchyard/platform/config';
import { connectPipeline } from '@switchyard/platform/pipeline';
import { createRuntime, runMain } from '@switchyard/platform/runtime';

const configSchema = z.object({
  ...commonEnv,
  DELIVERY_PORT: env.port(8083),
});

runMain('delivery', async () => {
  const config = loadConfig(configSchema);
  const runtime = createRuntime({ service: 'delivery', logLevel: config.LOG_LEVEL });
  await runtime.listen(config.HOST, config.DELIVERY_PORT);
  await connectPipeline(runtime, config, ['io.switchyard.pipeline.DeliveryTask', 'io.switchyard.pipeline.DeadLetter']);
});
