// kafkajs 2.2.4 as Switchyard uses it: the one module of the repository that imports kafkajs
// (imports.test.ts fails on any other). Importing it first puts every correction in place, then
// hands on kafkajs's API, so no code can load kafkajs uncorrected.
//
// The corrections, one file each (its header names the upstream defect, the behaviour before and
// after, and the test that reproduces it), installed by install.ts in this order:
//   aborted-transactions-filter.ts   read_committed consumers returned records of aborted transactions
//   send-messages.ts                 a send over several leader brokers duplicated and lost records
//   crc32c.ts                        the batch checksum, a byte at a time
//   record-batch-encoder.ts          record batches encoded with a buffer per field and three copies
//   fetch-broker-loss.ts             a fetch from a lost broker crashed the whole consumer
//   idle-fetch-wait.ts               (an addition) an idle consumer fetched as often as a busy one
//   heartbeat.ts                     the one ConsumerGroup.heartbeat wrapper: a lost coordinator
//                                    crashed the consumer; no hook before rejoining a rebalance
//   coordinator-cache.ts             a FindCoordinator round trip before every coordinator request
//   concurrent-transactions-retry.ts CONCURRENT_TRANSACTIONS waited out the client's whole retry time
//   offset-manager-coordinator.ts    offset commits stayed with the coordinator the group joined with
//   request-queue-timers.ts          each connection checked its empty request queue every millisecond,
//                                    and for timed-out requests every 100 ms (now every second)
//
// install.ts is imported before kafkajs on purpose: ES modules run their imports in the order they
// are written, and a correction put into Node's module cache after kafkajs loaded comes too late.
import './install.js';

import kafkajs from 'kafkajs';

export { AssignerProtocol, Kafka, logLevel, Partitioners } from 'kafkajs';
// Node finds no named export for these in kafkajs's CommonJS module: taken from its default export.
export const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;
export type {
  AclEntry, Admin, Cluster, Consumer, ConsumerConfig, ConsumerRunConfig, EachBatchPayload, ICustomPartitioner, IHeaders, KafkaConfig,
  LogEntry, Message, PartitionAssigner, PartitionerArgs, Producer, SASLOptions,
} from 'kafkajs';

// What Switchyard's own code uses of the corrections.
export { withoutAbortedRecords } from './aborted-transactions-filter.js';
export { beforeRejoining } from './heartbeat.js';
export { CONCURRENT_TRANSACTIONS_MESSAGE } from './concurrent-transactions-retry.js';
