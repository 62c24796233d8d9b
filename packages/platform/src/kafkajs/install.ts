// Corrections to kafkajs 2.2.4 (its last release), each put into Node's module cache under the file
// name of the kafkajs module it replaces, before kafkajs is first loaded, so kafkajs's own relative
// `require` gets the correction. Import this module before anything that loads kafkajs
// (kafka/client.ts and best-effort-writer.ts do, first): it throws if it comes too late.
import { createRequire, Module } from 'node:module';
import { withoutAbortedRecords } from './aborted-transactions-filter.js';
import { installFetchBrokerLoss } from './fetch-broker-loss.js';
import { installCoordinatorCache } from './coordinator-cache.js';
import { crc32c } from './crc32c.js';
import { encodeRecord, recordBatchModule } from './record-batch-encoder.js';
import { installHeartbeat } from './heartbeat.js';
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
// After the replacements: loading consumerGroup.js loads modules of kafkajs's own.
installFetchBrokerLoss();
installHeartbeat();
installCoordinatorCache();
