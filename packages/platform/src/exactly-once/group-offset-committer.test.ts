import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLogger } from '../logger.js';
import { GroupOffsetCommitter, type TopicPartitionOffset } from './group-offset-committer.js';

const logger = createLogger({ service: 'test', level: 'silent' });

function committer(fail: () => boolean = () => false) {
  const commits: TopicPartitionOffset[][] = [];
  const c = new GroupOffsetCommitter({
    topic: 'in', intervalMs: 60_000, logger,
    commit: async (offsets) => {
      if (fail()) throw new Error('The coordinator is rebalancing');
      commits.push(offsets);
    },
  });
  return { c, commits };
}

describe('GroupOffsetCommitter: the group offsets behind a position log', () => {
  it('commits the furthest position noted per partition, all partitions in one commit, nothing when nothing is new', async () => {
    const { c, commits } = committer();
    c.note(0, 10n);
    c.note(0, 14n);
    c.note(0, 12n);
    c.note(3, 7n);
    await c.flush();
    await c.flush();
    assert.deepEqual(commits, [[{ topic: 'in', partition: 0, offset: '14' }, { topic: 'in', partition: 3, offset: '7' }]]);
  });

  it('a failed commit is tried again with the next, for the partitions still assigned', async () => {
    let failing = true;
    const { c, commits } = committer(() => failing);
    c.retain([0, 1]);
    c.note(0, 10n);
    c.note(1, 20n);
    await c.flush();
    assert.equal(commits.length, 0);
    c.retain([0]); // partition 1 went to another instance meanwhile
    c.note(0, 11n);
    failing = false;
    await c.flush();
    assert.deepEqual(commits, [[{ topic: 'in', partition: 0, offset: '11' }]]);
  });

  it('drops what it noted of partitions given up; stop() commits what is left', async () => {
    const { c, commits } = committer();
    c.note(0, 5n);
    c.note(2, 9n);
    c.retain([2]);
    c.start();
    await c.stop();
    assert.deepEqual(commits, [[{ topic: 'in', partition: 2, offset: '9' }]]);
  });
});
