import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { replicationConfigs } from './topics.js';

describe('replicationConfigs', () => {
  it('three copies or more need two in sync for a write; fewer leave the broker default', () => {
    assert.deepEqual(replicationConfigs(1), {});
    assert.deepEqual(replicationConfigs(2), {});
    assert.deepEqual(replicationConfigs(3), { 'min.insync.replicas': '2' });
    assert.deepEqual(replicationConfigs(5), { 'min.insync.replicas': '2' });
  });
});
