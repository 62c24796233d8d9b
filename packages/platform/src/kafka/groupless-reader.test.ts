import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '../logger.js';
import { GrouplessReader, OffsetOutOfRangeError, type FetchedRecord, type PartitionSource } from './groupless-reader.js';

/** A partition log in memory; fetches answer after `pollMs` when there is nothing new (a long poll). */
class FakeLog implements PartitionSource {
  readonly logs = new Map<number, string[]>([[0, []]]);
  start = new Map<number, number>();
  failing: Error | undefined;
  outOfRangeOnce = false;
  recovered = 0;
  fetches: Array<{ partition: number; offset: bigint }> = [];
  constructor(private readonly pollMs = 5) {}

  append(partition: number, ...values: string[]): void { this.logs.get(partition)!.push(...values); }
  async partitions() { return [...this.logs.keys()]; }
  async earliestOffset(partition: number) { return BigInt(this.start.get(partition) ?? 0); }
  async fetch(partition: number, offset: bigint) {
    this.fetches.push({ partition, offset });
    if (this.failing) { await sleep(1); throw this.failing; }
    if (this.outOfRangeOnce) { this.outOfRangeOnce = false; throw new OffsetOutOfRangeError(partition); }
    const log = this.logs.get(partition)!;
    if (Number(offset) >= log.length) await sleep(this.pollMs);
    const records: FetchedRecord[] = log.slice(Number(offset), Number(offset) + 2).map((v, i) => ({ offset: String(Number(offset) + i), key: Buffer.from('k'), value: Buffer.from(v) }));
    return { records, nextOffset: offset + BigInt(records.length), endOffset: BigInt(log.length) };
  }
  async recover() { this.recovered++; }
  async close() {}
}

const started: GrouplessReader[] = [];
afterEach(async () => { await Promise.all(started.splice(0).map((r) => r.stop())); });

function reader(source: FakeLog, seen: string[] = []) {
  const r = new GrouplessReader({
    source, logger: createLogger({ service: 'test', level: 'silent' }), label: 'test', retryMinMs: 1, retryMaxMs: 8,
    onRecords: async (partition, records) => { for (const rec of records) seen.push(`${partition}:${rec.offset}:${rec.value}`); },
  });
  started.push(r);
  return r;
}

describe('GrouplessReader', () => {
  it('reads every partition from its first record, in order, and is current once each is at its end', async () => {
    const log = new FakeLog();
    log.logs.set(1, []);
    log.append(0, 'a', 'b', 'c');
    log.append(1, 'x');
    const seen: string[] = [];
    const r = reader(log, seen);
    const before = Date.now();
    await r.start();
    assert.equal(await r.whenCurrent(before, 1000), true);
    assert.deepEqual(seen.sort(), ['0:0:a', '0:1:b', '0:2:c', '1:0:x']);
    assert.ok((r.currentAsOf() ?? 0) >= before);
    log.append(0, 'd');
    assert.equal(await r.whenCurrent(Date.now(), 1000), true);
    assert.ok(seen.includes('0:3:d'));
    await r.stop();
  });

  it('starts at the earliest offset the log still has', async () => {
    const log = new FakeLog();
    log.append(0, 'gone', 'gone', 'kept');
    log.start.set(0, 2);
    const seen: string[] = [];
    const r = reader(log, seen);
    await r.start();
    assert.equal(await r.whenCurrent(Date.now(), 1000), true);
    assert.deepEqual(seen, ['0:2:kept']);
    await r.stop();
  });

  it('while fetches fail it is not current (a wait for a later time times out), recovers and retries, and is current again after', async () => {
    const log = new FakeLog();
    log.append(0, 'a');
    const seen: string[] = [];
    const r = reader(log, seen);
    await r.start();
    assert.equal(await r.whenCurrent(Date.now(), 1000), true);
    log.failing = new Error('connection refused');
    await sleep(30);
    const currentBefore = r.currentAsOf();
    log.append(0, 'written during the outage');
    const askedAt = Date.now();
    assert.equal(await r.whenCurrent(askedAt, 100), false, 'not current while the leader cannot be reached');
    assert.ok(log.recovered >= 2, 'metadata refreshed after failed fetches');
    assert.equal(r.currentAsOf(), currentBefore, 'currentAsOf stays where the last good fetch left it');
    const attempts = log.fetches.length;
    await sleep(50);
    assert.ok(log.fetches.length - attempts <= 12, `retries back off (${log.fetches.length - attempts} in 50 ms)`);
    log.failing = undefined;
    assert.equal(await r.whenCurrent(askedAt, 1000), true);
    assert.deepEqual(seen, ['0:0:a', '0:1:written during the outage']);
    await r.stop();
  });

  it('a wait made before the failure began resolves as soon as the fetch after recovery reaches the end', async () => {
    const log = new FakeLog();
    log.failing = new Error('no leader');
    const r = reader(log);
    await r.start();
    const waiting = r.whenCurrent(Date.now(), 2000);
    await sleep(20);
    log.failing = undefined;
    assert.equal(await waiting, true);
    await r.stop();
  });

  it('reads again from the earliest offset when its position left the log', async () => {
    const log = new FakeLog();
    log.append(0, 'a', 'b');
    const seen: string[] = [];
    const r = reader(log, seen);
    await r.start();
    assert.equal(await r.whenCurrent(Date.now(), 1000), true);
    log.outOfRangeOnce = true;
    log.append(0, 'c');
    await sleep(2);
    assert.equal(await r.whenCurrent(Date.now(), 1000), true);
    assert.deepEqual(seen.slice(0, 2), ['0:0:a', '0:1:b']);
    assert.deepEqual(seen.slice(-3), ['0:0:a', '0:1:b', '0:2:c'], 'the whole log read again after the reset');
    await r.stop();
  });

  it('stop ends pending waits with false and later waits answer false at once', async () => {
    const log = new FakeLog();
    log.failing = new Error('down');
    const r = reader(log);
    await r.start();
    const waiting = r.whenCurrent(Date.now(), 60_000);
    await r.stop();
    assert.equal(await waiting, false);
    assert.equal(await r.whenCurrent(Date.now(), 60_000), false);
  });

  it('concurrent waits share the fetches: many waiters, no extra requests', async () => {
    const log = new FakeLog(20);
    log.append(0, 'a');
    const r = reader(log);
    await r.start();
    await r.whenCurrent(Date.now(), 1000);
    const before = log.fetches.length;
    const since = Date.now();
    const results = await Promise.all(Array.from({ length: 500 }, () => r.whenCurrent(since, 1000)));
    assert.ok(results.every(Boolean));
    assert.ok(log.fetches.length - before <= 3, `${log.fetches.length - before} fetches for 500 waiters`);
    await r.stop();
  });
});
