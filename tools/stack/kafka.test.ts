// The broker configuration for one node and for each node of a cluster: pure, no broker started.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replicationFor, serverProperties } from './kafka.js';
import { kafkaAddresses } from './layout.js';

const props = (text: string) => new Map(text.split('\n').filter((l) => l.includes('=')).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)] as const));

describe('serverProperties', () => {
  it('one node: its own single-voter quorum, everything at one replica', () => {
    const p = props(serverProperties({ dir: '/d', port: 9092, controllerPort: 9093 }));
    assert.equal(p.get('node.id'), '1');
    assert.equal(p.get('controller.quorum.voters'), '1@127.0.0.1:9093');
    assert.equal(p.get('listeners'), 'PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093');
    for (const k of ['offsets.topic.replication.factor', 'transaction.state.log.replication.factor', 'transaction.state.log.min.isr', 'min.insync.replicas', 'default.replication.factor']) assert.equal(p.get(k), '1', k);
    assert.equal(p.get('log.dirs'), '/d/data');
  });

  it('node i of three: its own id and listeners, every node a voter, three replicas of which two must acknowledge', () => {
    const cluster = kafkaAddresses(3, 19092);
    const p = props(serverProperties({ dir: '/d/kafka-2', nodeId: 2, cluster, ...cluster[1]! }));
    assert.equal(p.get('process.roles'), 'broker,controller');
    assert.equal(p.get('node.id'), '2');
    assert.equal(p.get('controller.quorum.voters'), '1@127.0.0.1:19093,2@127.0.0.1:19095,3@127.0.0.1:19097');
    assert.equal(p.get('listeners'), 'PLAINTEXT://127.0.0.1:19094,CONTROLLER://127.0.0.1:19095');
    assert.equal(p.get('advertised.listeners'), 'PLAINTEXT://127.0.0.1:19094');
    assert.equal(p.get('offsets.topic.replication.factor'), '3');
    assert.equal(p.get('transaction.state.log.replication.factor'), '3');
    assert.equal(p.get('transaction.state.log.min.isr'), '2');
    assert.equal(p.get('default.replication.factor'), '3');
    assert.equal(p.get('min.insync.replicas'), '2');
  });

  it('replication follows the broker count, never above three; two copies need only one in sync', () => {
    assert.deepEqual([1, 2, 3, 5].map(replicationFor), [
      { replicationFactor: 1, minInsyncReplicas: 1 },
      { replicationFactor: 2, minInsyncReplicas: 1 },
      { replicationFactor: 3, minInsyncReplicas: 2 },
      { replicationFactor: 3, minInsyncReplicas: 2 },
    ]);
  });
});
