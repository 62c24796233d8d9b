import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Producer } from 'kafkajs';
import { createLogger } from '../logger.js';
import { TransactionalProducer } from './transaction.js';

/** A producer stand-in: `stuck` makes transaction() fail as kafkajs does in state COMMITTING. */
function fakeProducer(name: string, log: string[], stuck: boolean): Producer {
  return {
    connect: async () => { log.push(`${name}.connect`); },
    disconnect: async () => { log.push(`${name}.disconnect`); },
    transaction: async () => {
      if (stuck) throw new Error('Transaction state exception: Cannot call "beginTransaction" in state "COMMITTING"');
      return {
        sendBatch: async () => { log.push(`${name}.sendBatch`); },
        sendOffsets: async () => { log.push(`${name}.sendOffsets`); },
        commit: async () => { log.push(`${name}.commit`); },
        abort: async () => { log.push(`${name}.abort`); },
      };
    },
  } as unknown as Producer;
}

describe('TransactionalProducer: a producer a failed transaction left unusable is replaced', () => {
  const logger = createLogger({ service: 'test', level: 'silent' });
  const record = { topic: 't', key: 'k', value: Buffer.from('v') };
  const position = { groupId: 'g', topic: 'in', partition: 0, offset: '11' };

  it('rethrows the failure, disconnects the producer, and the next transaction runs on a new one', async () => {
    const log: string[] = [];
    let n = 0;
    const tp = new TransactionalProducer(() => fakeProducer(`p${n}`, log, n++ === 0), logger);
    await tp.connect();
    await assert.rejects(tp.commit([record], position), /state "COMMITTING"/);
    await tp.commit([record], position);
    assert.deepEqual(log, ['p0.connect', 'p0.disconnect', 'p1.connect', 'p1.sendBatch', 'p1.sendOffsets', 'p1.commit']);
    await tp.disconnect();
    assert.equal(log.at(-1), 'p1.disconnect');
  });

  it('a replacement that could not connect (the broker still away) is connected before its first transaction', async () => {
    const log: string[] = [];
    let n = 0;
    let brokerUp = false;
    const make = () => {
      const p = fakeProducer(`p${n}`, log, n++ === 0);
      const connect = p.connect;
      p.connect = async () => { if (!brokerUp && n > 1) throw new Error('connect ECONNREFUSED'); await connect(); };
      return p;
    };
    const tp = new TransactionalProducer(make, logger);
    await tp.connect();
    await assert.rejects(tp.commit([record]));
    brokerUp = true;
    await tp.commit([record]);
    assert.deepEqual(log, ['p0.connect', 'p0.disconnect', 'p1.connect', 'p1.sendBatch', 'p1.commit']);
  });
});
