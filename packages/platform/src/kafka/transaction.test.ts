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

describe('TransactionalProducer: group commit', () => {
  const logger = createLogger({ service: 'test', level: 'silent' });
  /** Records each transaction as the records and offsets it carried; `gate` holds commit() until released. */
  function recordingProducer(transactions: Array<{ records: number; offsets: unknown[] }>, opts: { gate?: Promise<void>; fail?: boolean } = {}): Producer {
    return {
      connect: async () => {}, disconnect: async () => {},
      transaction: async () => {
        const t = { records: 0, offsets: [] as unknown[] };
        return {
          sendBatch: async ({ topicMessages }: { topicMessages: Array<{ messages: unknown[] }> }) => { t.records += topicMessages.reduce((n, m) => n + m.messages.length, 0); },
          sendOffsets: async (o: unknown) => { t.offsets.push(o); },
          commit: async () => { await opts.gate; if (opts.fail) throw new Error('broker said no'); transactions.push(t); },
          abort: async () => {},
        };
      },
    } as unknown as Producer;
  }
  const rec = { topic: 'out', key: 'k', value: Buffer.from('v') };
  const at = (partition: number, offset: string) => ({ groupId: 'g', topic: 'in', partition, offset });

  it('the batches of one fetch (asked in the same turn) share one transaction with every partition\'s offset', async () => {
    const transactions: Array<{ records: number; offsets: unknown[] }> = [];
    const tp = new TransactionalProducer(() => recordingProducer(transactions), logger);
    await Promise.all([tp.commit([rec, rec], at(0, '5')), tp.commit([rec], at(1, '9')), tp.commit([], at(2, '3'))]);
    assert.equal(transactions.length, 1);
    assert.equal(transactions[0]!.records, 3);
    assert.deepEqual(transactions[0]!.offsets, [{ consumerGroupId: 'g', topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '5' }, { partition: 1, offset: '9' }, { partition: 2, offset: '3' }] }] }]);
  });

  it('a commit asked while a transaction is in flight goes in the next one, with all others asked meanwhile; a lone one goes at once', async () => {
    const transactions: Array<{ records: number; offsets: unknown[] }> = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const tp = new TransactionalProducer(() => recordingProducer(transactions, { gate }), logger);
    const first = tp.commit([rec], at(0, '1'));
    await new Promise((r) => setImmediate(r));
    const second = tp.commit([rec], at(0, '2'));
    const third = tp.commit([rec], at(1, '7'));
    await new Promise((r) => setTimeout(r, 10));
    assert.equal(transactions.length, 0, 'the first is still in flight');
    release();
    await Promise.all([first, second, third]);
    assert.deepEqual(transactions.map((t) => t.records), [1, 2]);
    assert.deepEqual(transactions[1]!.offsets, [{ consumerGroupId: 'g', topics: [{ topic: 'in', partitions: [{ partition: 0, offset: '2' }, { partition: 1, offset: '7' }] }] }]);
  });

  it('a failed transaction rejects every batch it carried', async () => {
    const tp = new TransactionalProducer(() => recordingProducer([], { fail: true }), logger);
    const results = await Promise.allSettled([tp.commit([rec], at(0, '1')), tp.commit([rec], at(1, '1'))]);
    assert.deepEqual(results.map((r) => r.status), ['rejected', 'rejected']);
  });
});
