import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Producer } from '../kafkajs/index.js';
import { createLogger } from '../logger.js';
import { PartitionTransactions, partitionTransactionalId, uncommittedRecords, type PartitionLease } from './partition-transactions.js';

const logger = createLogger({ service: 'test', level: 'silent' });
const record = { topic: 'out', key: 'k', value: Buffer.from('v') };

/**
 * A stand-in for one partition's transactional producer. Its first transaction() is the fence (kafkajs
 * sends InitProducerId with it); `failCommit` makes the next commit fail as a fenced producer's does.
 */
function fakeProducer(name: string, log: string[], opts: { failCommit?: () => boolean } = {}): Producer {
  return {
    connect: async () => { log.push(`${name}.connect`); },
    disconnect: async () => { log.push(`${name}.disconnect`); },
    transaction: async () => ({
      sendBatch: async () => { log.push(`${name}.sendBatch`); },
      sendOffsets: async ({ topics }: { topics: Array<{ partitions: Array<{ offset: string }> }> }) => { log.push(`${name}.sendOffsets@${topics[0]!.partitions[0]!.offset}`); },
      commit: async () => {
        if (opts.failCommit?.()) throw new Error('The producer attempted to use a producer id which is not currently assigned to its transactional id');
        log.push(`${name}.commit`);
      },
      abort: async () => { log.push(`${name}.abort`); },
    }),
  } as unknown as Producer;
}

function harness(committed: Map<number, bigint>, opts: { failCommit?: () => boolean; onAcquired?: (p: number) => Promise<void> } = {}) {
  const log: string[] = [];
  const made = new Map<number, number>();
  const transactions = new PartitionTransactions({
    groupId: 'g', topic: 'in', logger,
    createProducer: (p) => {
      const n = (made.get(p) ?? 0) + 1;
      made.set(p, n);
      return fakeProducer(`p${p}#${n}`, log, opts);
    },
    committedOffset: async (p) => { log.push(`offsets(${p})`); return committed.get(p); },
    ...(opts.onAcquired ? { onAcquired: opts.onAcquired } : {}),
  });
  return { transactions, log };
}

describe('PartitionTransactions: one transactional id per input partition, fenced in before use', () => {
  it('names each partition\'s transactional id after the stage and partition', () => {
    assert.equal(partitionTransactionalId('switchyard.', 'fanout', 7), 'switchyard.fanout-p7');
  });

  it('fences a partition in (InitProducerId through an empty transaction) before it reads the committed offset, then commits with it', async () => {
    const { transactions, log } = harness(new Map([[0, 40n]]));
    const next = await transactions.withPartition(0, async (lease) => {
      const before = lease.next;
      await lease.commit([record], '45');
      return [before, lease.next];
    });
    assert.deepEqual(next, [40n, 45n]);
    // The empty transaction's abort is the fence; the offsets are read only after it.
    assert.deepEqual(log, ['p0#1.connect', 'p0#1.abort', 'offsets(0)', 'p0#1.sendBatch', 'p0#1.sendOffsets@45', 'p0#1.commit']);
  });

  it('keeps a partition fenced in between batches: one fence, then only transactions', async () => {
    const { transactions, log } = harness(new Map());
    await transactions.withPartition(1, (lease) => lease.commit([record], '1'));
    await transactions.withPartition(1, (lease) => lease.commit([record], '2'));
    assert.equal(log.filter((l) => l.endsWith('.abort')).length, 1);
    assert.equal(log.filter((l) => l === 'offsets(1)').length, 1);
  });

  it('after a failed transaction gives the partition up and fences it in again, reading the committed offset anew', async () => {
    let fail = true;
    const committed = new Map([[2, 10n]]);
    const { transactions, log } = harness(committed, { failCommit: () => { const f = fail; fail = false; return f; } });
    await assert.rejects(transactions.withPartition(2, (lease) => lease.commit([record], '20')), /not currently assigned/);
    committed.set(2, 30n); // meanwhile another owner committed
    const seen = await transactions.withPartition(2, async (lease) => lease.next);
    assert.equal(seen, 30n);
    assert.deepEqual(log.filter((l) => /connect|disconnect|offsets/.test(l)), ['p2#1.connect', 'offsets(2)', 'p2#1.disconnect', 'p2#2.connect', 'offsets(2)']);
  });

  it('runs the work of one partition one piece at a time, and of different partitions side by side', async () => {
    const { transactions } = harness(new Map());
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => { release = r; });
    const first = transactions.withPartition(0, async () => { events.push('0a start'); await gate; events.push('0a end'); });
    const second = transactions.withPartition(0, async () => { events.push('0b'); });
    const other = transactions.withPartition(1, async () => { events.push('1'); });
    await other;
    assert.deepEqual(events, ['0a start', '1']);
    release();
    await Promise.all([first, second]);
    assert.deepEqual(events, ['0a start', '1', '0a end', '0b']);
  });

  it('assign fences new partitions in ahead of their first batch and gives up lost ones', async () => {
    const { transactions, log } = harness(new Map());
    transactions.assign([0, 1]);
    await transactions.withPartition(0, async () => undefined);
    await transactions.withPartition(1, async () => undefined);
    assert.deepEqual(transactions.owned(), [0, 1]);
    transactions.assign([1, 2]);
    await transactions.withPartition(2, async () => undefined);
    // A batch of a partition no longer assigned is skipped: fencing it in would abort the new owner's work.
    assert.equal(await transactions.withPartition(0, async () => 'ran'), undefined);
    assert.ok(log.includes('p0#1.disconnect'), log.join(' '));
    assert.ok(!log.includes('p0#2.connect'));
    assert.ok(log.includes('p2#1.connect'));
    // Partition 1 was kept: not fenced in a second time.
    assert.equal(log.filter((l) => l === 'p1#1.connect').length, 1);
    assert.ok(!log.includes('p1#2.connect'));
    await transactions.close();
    assert.deepEqual(transactions.owned(), []);
  });

  it('runs onAcquired after the fence and before the first batch (audiences reads the partition\'s changelog there)', async () => {
    const order: string[] = [];
    const { transactions, log } = harness(new Map(), { onAcquired: async (p) => { order.push(`caught up ${p} after ${log.at(-1)}`); } });
    await transactions.withPartition(3, async () => { order.push('batch'); });
    assert.deepEqual(order, ['caught up 3 after offsets(3)', 'batch']);
  });

  it('onReleased runs for each partition given up: lost in a rebalance, after a failed transaction, on close', async () => {
    const released: number[] = [];
    let fail = false;
    const transactions = new PartitionTransactions({
      groupId: 'g', topic: 'in', logger,
      createProducer: (p) => fakeProducer(`p${p}`, [], { failCommit: () => fail }),
      committedOffset: async () => undefined,
      onReleased: (p) => released.push(p),
    });
    transactions.assign([0, 1, 2]);
    await Promise.all([0, 1, 2].map((p) => transactions.withPartition(p, async () => undefined)));
    transactions.assign([1, 2]);
    await transactions.withPartition(1, async () => undefined);
    fail = true;
    await assert.rejects(transactions.withPartition(1, (lease) => lease.commit([record], '3')));
    fail = false;
    await transactions.close();
    assert.deepEqual(released, [0, 1, 2]);
  });

  it('with a position log: the position goes into the transaction as a record (no offsets commit), the start is the furthest of log and group, and the group follows', async () => {
    const log: string[] = [];
    const noted: string[] = [];
    const logged = new Map([[0, 50n], [1, 5n]]);
    const group = new Map([[0, 40n], [1, 8n], [2, 3n]]);
    const transactions = new PartitionTransactions({
      groupId: 'g', topic: 'in', logger,
      createProducer: (p) => {
        const producer = fakeProducer(`p${p}`, log);
        return { ...producer, transaction: async () => ({ ...(await producer.transaction()), sendBatch: async ({ topicMessages }: { topicMessages: Array<{ topic: string; messages: unknown[] }> }) => { log.push(`p${p}.sendBatch ${topicMessages.map((t) => `${t.topic}×${t.messages.length}`).join(' ')}`); } }) } as unknown as Producer;
      },
      committedOffset: async (p) => group.get(p),
      positions: {
        log: { record: (p, next) => ({ topic: 'positions', partition: p, key: `p${p}`, value: Buffer.from(next) }), latest: async (p) => logged.get(p) },
        groupOffsets: { note: (p, next) => noted.push(`${p}@${next}`), retain: (ps) => noted.push(`retain ${ps.join(',')}`) },
      },
    });
    transactions.assign([0, 1, 2, 3]);
    const starts = await Promise.all([0, 1, 2, 3].map((p) => transactions.withPartition(p, async (lease) => lease.next)));
    assert.deepEqual(starts, [50n, 8n, 3n, undefined], 'log ahead, group ahead (written by an older version), group only, neither');
    await transactions.withPartition(0, (lease) => lease.commit([record], '60'));
    assert.deepEqual(log.filter((l) => l.startsWith('p0.')), ['p0.connect', 'p0.abort', 'p0.sendBatch out×1 positions×1', 'p0.commit']);
    assert.deepEqual(noted.slice(0, 1), ['retain 0,1,2,3']);
    assert.deepEqual(noted.slice(1).sort(), ['0@50', '0@60', '1@8', '2@3'].sort());
    await transactions.close();
  });

  it('a partition whose fence failed (broker away) is not held, and the next batch tries again', async () => {
    let down = true;
    const transactions = new PartitionTransactions({
      groupId: 'g', topic: 'in', logger,
      createProducer: () => ({ ...fakeProducer('p', []), connect: async () => { if (down) throw new Error('connect ECONNREFUSED'); } }) as unknown as Producer,
      committedOffset: async () => 5n,
    });
    await assert.rejects(transactions.withPartition(0, async () => undefined), /ECONNREFUSED/);
    assert.deepEqual(transactions.owned(), []);
    down = false;
    assert.equal(await transactions.withPartition(0, async (lease) => lease.next), 5n);
  });
});

describe('uncommittedRecords: what a batch holds beyond the committed offset', () => {
  const lease = (next: bigint | undefined) => ({ partition: 0, next, commit: async () => undefined }) as PartitionLease;
  const batch = (offsets: number[], last = offsets.at(-1)!) => ({ topic: 'in', partition: 0, messages: offsets.map((o) => ({ offset: String(o) })), lastOffset: () => String(last) });
  it('keeps a whole batch at or past the committed offset (the usual case)', () => {
    const seeks: unknown[] = [];
    assert.deepEqual(uncommittedRecords(batch([5, 6, 9]), lease(5n), (s) => seeks.push(s)).map((m) => m.offset), ['5', '6', '9']);
    assert.deepEqual(uncommittedRecords(batch([0, 1]), lease(undefined), (s) => seeks.push(s)).length, 2);
    assert.deepEqual(seeks, []);
  });
  it('drops the records a previous owner committed', () => {
    assert.deepEqual(uncommittedRecords(batch([3, 4, 5, 6]), lease(5n), () => assert.fail('no seek')).map((m) => m.offset), ['5', '6']);
  });
  it('a batch wholly below the committed offset seeks there, unless the offset right after it is that offset (a marker between)', () => {
    const seeks: unknown[] = [];
    assert.deepEqual(uncommittedRecords(batch([1, 2]), lease(40n), (s) => seeks.push(s)), []);
    assert.deepEqual(seeks, [{ topic: 'in', partition: 0, offset: '40' }]);
    assert.deepEqual(uncommittedRecords(batch([1, 2], 39), lease(40n), (s) => seeks.push(s)), []);
    assert.equal(seeks.length, 1);
  });
});
