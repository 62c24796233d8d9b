// One-shot set-up step (a Kubernetes Job, or the first thing `npm start` runs): creates or updates
// every topic from its declaration and registers every Avro schema. Safe to run any number of times.
import { z } from 'zod';
import { loadConfig, commonEnv, topicEnv } from '@switchyard/platform/config';
import { AvroCodec } from '@switchyard/platform/codec/avro-codec';
import { registryConnection } from '@switchyard/platform/codec/registry-connection';
import { createKafka } from '@switchyard/platform/kafka/client';
import { exitOnFatal, failureWatch } from '@switchyard/platform/kafka/failure-watch';
import { ensureTopics } from '@switchyard/platform/kafka/admin';
import { topicDeclarations } from '@switchyard/platform/kafka/topics';
import { createLogger } from '@switchyard/platform/logger';
import { runMain } from '@switchyard/platform/runtime';

const configSchema = z.object({
  ...commonEnv,
  ...topicEnv,
  SWITCHYARD_REPLICATION_FACTOR: z.coerce.number().int().min(1).default(1),
});

runMain('setup', async () => {
  const config = loadConfig(configSchema);
  const logger = createLogger({ service: 'setup', level: config.LOG_LEVEL });
  failureWatch.handleFatal(exitOnFatal(logger));
  const kafka = createKafka({ brokers: config.KAFKA_BROKERS, clientId: 'switchyard-setup', logger, security: config });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const declarations = topicDeclarations({ prefix: config.SWITCHYARD_TOPIC_PREFIX, partitions: config.SWITCHYARD_PARTITIONS, retryTiers: config.SWITCHYARD_RETRY_TIERS.length });
    const result = await ensureTopics(admin, declarations, undefined, config.SWITCHYARD_REPLICATION_FACTOR);
    const ids = await new AvroCodec(registryConnection(config)).register();
    logger.info({ topics: declarations.length, ...result, schemas: Object.fromEntries(ids) }, 'set-up complete');
  } finally {
    await admin.disconnect();
  }
});
