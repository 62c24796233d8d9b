// What npm start runs for --brokers and --instances: pure, nothing started.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { kafkaAddresses, parseBrokers, parseInstances, serviceInstances } from './layout.js';

describe('stack layout', () => {
  it('one broker keeps 9092/9093; a cluster takes the next pairs', () => {
    assert.deepEqual(kafkaAddresses(1), [{ port: 9092, controllerPort: 9093 }]);
    assert.deepEqual(kafkaAddresses(3).map((a) => `${a.port}/${a.controllerPort}`), ['9092/9093', '9094/9095', '9096/9097']);
  });

  it('--brokers: 1 by default, whole numbers up to 5', () => {
    assert.equal(parseBrokers(undefined), 1);
    assert.equal(parseBrokers('3'), 3);
    for (const bad of ['0', '6', 'three', '2.5', '']) assert.throws(() => parseBrokers(bad), /--brokers/, bad);
  });

  it('--instances: one count for all four services, or some named', () => {
    assert.deepEqual(parseInstances(undefined), { ingest: 1, fanout: 1, delivery: 1, audiences: 1 });
    assert.deepEqual(parseInstances('2'), { ingest: 2, fanout: 2, delivery: 2, audiences: 2 });
    assert.deepEqual(parseInstances('fanout=2, delivery=3'), { ingest: 1, fanout: 2, delivery: 3, audiences: 1 });
    assert.throws(() => parseInstances('control=2'), /not one of ingest, fanout, delivery, audiences/);
    assert.throws(() => parseInstances('fanout=0'), /whole number/);
    assert.throws(() => parseInstances('x'), /whole number/);
  });

  it('by default one process per service on its usual port', () => {
    const all = serviceInstances(parseInstances(undefined));
    assert.deepEqual(all.map((s) => [s.name, s.port]), [['control', 8081], ['ingest', 8080], ['fanout', 8082], ['delivery', 8083], ['audiences', 8084]]);
    assert.ok(all.every((s) => Object.keys(s.env).length === 1));
  });

  it('several instances: ports 100 apart from the (overridable) base, and nothing else of their own', () => {
    const all = serviceInstances(parseInstances('fanout=2,delivery=2,audiences=2'), { DELIVERY_PORT: '9300' });
    assert.deepEqual(all.map((s) => [s.name, s.port]), [
      ['control', 8081], ['ingest', 8080], ['fanout', 8082], ['fanout-2', 8182], ['delivery', 9300], ['delivery-2', 9400], ['audiences', 8084], ['audiences-2', 8184],
    ]);
    const env = (name: string) => all.find((s) => s.name === name)!.env;
    assert.deepEqual(env('fanout'), { FANOUT_PORT: '8082' });
    assert.deepEqual(env('fanout-2'), { FANOUT_PORT: '8182' });
    assert.deepEqual(env('audiences-2'), { AUDIENCES_PORT: '8184' });
    assert.deepEqual(env('delivery-2'), { DELIVERY_PORT: '9400' });
  });
});
