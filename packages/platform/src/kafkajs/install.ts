// Puts every kafkajs correction of this folder in place, in the one order that works. Imported by
// index.ts before kafkajs itself; nothing else imports it.
//
// 1. Module replacements: each corrected module goes into Node's module cache under the file name
//    of the kafkajs module it replaces, before kafkajs is first loaded, so kafkajs's own relative
//    `require` gets the correction. Too late once kafkajs loaded (the modules that required the
//    original hold on to it): replaceKafkajsModule throws then.
// 2. Prototype patches: they load kafkajs's ConsumerGroup, Cluster, Broker and OffsetManager
//    modules (and RequestQueue's), which load modules replaced in step 1, so they come after it. Each patch wraps a
//    different method, with two exceptions. idle-fetch-wait.ts wraps ConsumerGroup.fetch, which calls
//    the recoverFromFetch that fetch-broker-loss.ts wraps: they compose in either order.
//    coordinator-cache.ts and concurrent-transactions-retry.ts both wrap AddPartitionsToTxn and
//    AddOffsetsToTxn: the cache ignores CONCURRENT_TRANSACTIONS, so either order behaves the same;
//    the retry goes outside. Each patch installs itself once per process (a Symbol.for mark on the
//    prototype).
import { createRequire, Module } from 'node:module';
import { withoutAbortedRecords } from './aborted-transactions-filter.js';
import { installConcurrentTransactionsRetry } from './concurrent-transactions-retry.js';
import { installCoordinatorCache } from './coordinator-cache.js';
import { crc32c } from './crc32c.js';
import { installFetchBrokerLoss } from './fetch-broker-loss.js';
import { installHeartbeat } from './heartbeat.js';
import { installIdleFetchWait } from './idle-fetch-wait.js';
import { installOffsetManagerCoordinator } from './offset-manager-coordinator.js';
import { installRequestQueueTimers } from './request-queue-timers.js';
import { encodeRecord, recordBatchModule } from './record-batch-encoder.js';
import { createSendMessages } from './send-messages.js';

const require = createRequire(import.meta.url);

function replaceKafkajsModule(request: string, exports: unknown): void {
  const path = require.resolve(request);
  const cached = require.cache[path];
  if (cached?.exports === exports) return;
  // Too late once kafkajs's own module ran: the modules that required it hold on to it.
  if (cached?.loaded) throw new Error(`kafkajs was loaded before ${request} was replaced: import kafkajs/index.js first`);
  const module = new Module(path);
  module.filename = path;
  module.loaded = true;
  module.exports = exports;
  require.cache[path] = module;
}

replaceKafkajsModule('kafkajs/src/consumer/filterAbortedMessages.js', withoutAbortedRecords);
replaceKafkajsModule('kafkajs/src/producer/sendMessages.js', createSendMessages);
replaceKafkajsModule('kafkajs/src/protocol/recordBatch/crc32C/index.js', crc32c);
replaceKafkajsModule('kafkajs/src/protocol/recordBatch/record/v0/index.js', encodeRecord);
replaceKafkajsModule('kafkajs/src/protocol/recordBatch/v0/index.js', recordBatchModule);

installFetchBrokerLoss();
installIdleFetchWait();
installHeartbeat();
installCoordinatorCache();
installConcurrentTransactionsRetry();
installOffsetManagerCoordinator();
installRequestQueueTimers();
