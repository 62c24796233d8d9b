import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, ConsumerRunConfig, Kafka } from '../kafkajs/index.js';
import { createConsumer } from './client.js';

/** A kafkajs consumer stand-in: records calls; crash() emits CRASH as kafkajs does after disconnecting itself. */
function fakeKafka() {
  const emitter = new EventEmitter();
  const calls: string[] = [];
  const runs: ConsumerRunConfig[] = [];
  const consumer = {
    events: { CRASH: 'consumer.crash' },
    on: (event: string, listener: (e: unknown) => void) => { emitter.on(event, listener); return () => emitter.off(event, listener); },
    connect: async () => { calls.push('connect'); },
    run: async (cfg: ConsumerRunConfig) => { calls.push('run'); runs.push(cfg); },
    stop: async () => { calls.push('stop'); },
    disconnect: async () => { calls.push('disconnect'); },
  };
  const kafka = { consumer: () => consumer } as unknown as Kafka;
  const crash = (restart: boolean) => emitter.emit('consumer.crash', { payload: { error: new Error('Failed to find group coordinator'), groupId: 'g', restart } });
  return { kafka, calls, runs, crash };
}

describe('createConsumer: a crash kafkajs does not restart from', () => {
  const cfg: ConsumerRunConfig = { eachBatch: async () => undefined };

  it('connects and runs the consumer again, with the same handlers, after a second', async () => {
    const f = fakeKafka();
    const consumer: Consumer = createConsumer(f.kafka, { groupId: 'g' });
    await consumer.run(cfg);
    f.crash(false);
    await sleep(1300);
    assert.deepEqual(f.calls, ['run', 'connect', 'run']);
    assert.equal(f.runs[1], cfg);
  });

  it('leaves it to kafkajs when kafkajs restarts it, and does nothing once stopped or disconnected', async () => {
    const f = fakeKafka();
    const consumer = createConsumer(f.kafka, { groupId: 'g' });
    await consumer.run(cfg);
    f.crash(true);
    await consumer.disconnect();
    f.crash(false);
    const g = fakeKafka();
    const other = createConsumer(g.kafka, { groupId: 'g' });
    await other.run(cfg);
    g.crash(false);
    await other.stop(); // before the second is up: the pending restart is dropped
    await sleep(1300);
    assert.deepEqual(f.calls, ['run', 'disconnect']);
    assert.deepEqual(g.calls, ['run', 'stop']);
  });
});
