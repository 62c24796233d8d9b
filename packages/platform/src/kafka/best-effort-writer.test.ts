import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../logger.js';
import { BestEffortWriter } from './best-effort-writer.js';

const logger = createLogger({ service: 'test', level: 'silent' });
// One Kafka record per item here; delivery's recorder packs a whole batch into one record.
const toMessages = (items: string[]) => items.map((k) => ({ key: k, value: Buffer.from(k) }));
type Sent = { topic: string; acks?: number; messages: Array<{ key?: string | Buffer | null; value: Buffer | string | null }> };

describe('BestEffortWriter: fire-and-forget observability records', () => {
  it('write returns at once; a flush sends in batches with acks=1', async () => {
    const sent: Sent[] = [];
    const w = new BestEffortWriter({ send: async (r: Sent) => { sent.push(r); return []; } } as never, { topic: 't', toMessages, maxBatch: 2, logger });
    for (const k of ['a', 'b', 'c']) w.write(k);
    await w.flush();
    assert.deepEqual(sent.map((s) => [s.topic, s.acks, s.messages.map((m) => m.key)]), [['t', 1, ['a', 'b']], ['t', 1, ['c']]]);
    assert.equal(w.buffered, 0);
  });

  it('a lingering flush (timer, full batch) sends what is buffered, then only full batches: the rest waits for the next tick', async () => {
    const sent: Sent[] = [];
    let later: () => void = () => {};
    const w = new BestEffortWriter({ send: async (r: Sent) => { sent.push(r); later(); return []; } } as never, { topic: 't', toMessages, maxBatch: 2, logger });
    w.write('a');
    later = () => { later = () => {}; for (const k of ['b', 'c', 'd']) w.write(k); }; // arrive while 'a' is being sent
    await w.flush(false);
    assert.deepEqual(sent.map((s) => s.messages.map((m) => m.key)), [['a'], ['b', 'c']]);
    assert.equal(w.buffered, 1);
    await w.flush();
    assert.deepEqual(sent.map((s) => s.messages.map((m) => m.key)), [['a'], ['b', 'c'], ['d']]);
  });

  it('while Kafka hangs, the buffer stays bounded: the oldest records are dropped and counted', async () => {
    let release!: () => void;
    const sent: Sent[] = [];
    const dropped: Array<[string, number]> = [];
    const w = new BestEffortWriter({ send: (r: Sent) => { sent.push(r); return new Promise<[]>((res) => { release = () => res([]); }); } } as never, {
      topic: 't', toMessages, maxBatch: 1, maxBuffered: 3, logger, onDropped: (reason, n) => dropped.push([reason, n]),
    });
    w.write('0');
    const flushing = w.flush(); // '0' is in flight and hangs
    for (let i = 1; i <= 5; i++) w.write(String(i));
    assert.equal(w.buffered, 3);
    assert.deepEqual(dropped, [['overflow', 1], ['overflow', 1]]);
    for (let i = 0; i < 4; i++) { release(); await new Promise((r) => setImmediate(r)); }
    await flushing;
    assert.deepEqual(sent.map((s) => s.messages[0]!.key), ['0', '3', '4', '5']);
  });

  it('a failed send is dropped and counted, never thrown', async () => {
    const dropped: Array<[string, number]> = [];
    const w = new BestEffortWriter({ send: async () => { throw new Error('broker down'); } } as never, { topic: 't', toMessages, logger, onDropped: (reason, n) => dropped.push([reason, n]) });
    w.write('a');
    w.write('b');
    await w.flush();
    assert.deepEqual(dropped, [['send_failed', 2]]);
    assert.equal(w.buffered, 0);
  });
});

describe('BestEffortWriter: items are encoded per batch', () => {
  it('hands each batch to toMessages once', async () => {
    const sent: Sent[] = [];
    const w = new BestEffortWriter<number>({ send: async (r: Sent) => { sent.push(r); return []; } } as never, {
      topic: 't', maxBatch: 3, logger, toMessages: (items) => [{ key: 'k', value: Buffer.from(items.join(',')) }],
    });
    for (let i = 1; i <= 5; i++) w.write(i);
    await w.flush();
    assert.deepEqual(sent.map((s) => s.messages.map((m) => String(m.value))), [['1,2,3'], ['4,5']]);
  });
});
