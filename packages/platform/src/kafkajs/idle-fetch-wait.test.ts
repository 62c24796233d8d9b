import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { IDLE_AFTER_MS, IDLE_FETCH_WAIT_MS, idleAwareFetch, type FetchingGroup } from './idle-fetch-wait.js';

/** Just what the wrapper touches of a ConsumerGroup, with a clock the test moves. */
function group(ownWait: number) {
  let now = 0;
  let paused = false;
  let records = false;
  const waits: number[] = [];
  const self = { maxWaitTime: ownWait, subscriptionState: { paused: () => (paused ? [{ topic: 't', partitions: [0] }] : []) } } as unknown as FetchingGroup;
  const fetch = idleAwareFetch(async function (this: FetchingGroup) {
    waits.push(this.maxWaitTime);
    now += this.maxWaitTime; // an empty fetch takes its wait; one with records comes back at once, which the test does not need
    return [{ isEmpty: () => !records }];
  }, () => now);
  return {
    waits, fetch: () => fetch.call(self, 1),
    set: (s: { paused?: boolean; records?: boolean }) => { paused = s.paused ?? paused; records = s.records ?? records; },
  };
}

describe('kafkajs idle fetch wait', () => {
  it('a consumer whose fetches came back empty for a second, nothing paused, waits longer; a record returns it to its own wait', async () => {
    const g = group(20);
    for (let i = 0; i < IDLE_AFTER_MS / 20 + 2; i++) await g.fetch();
    assert.equal(g.waits[0], 20);
    assert.equal(g.waits.at(-1), IDLE_FETCH_WAIT_MS);
    assert.equal(g.waits.filter((w) => w === 20).length, IDLE_AFTER_MS / 20, 'its own wait until a second has passed');
    g.set({ records: true });
    await g.fetch(); // the fetch that brings the record was still an idle one
    await g.fetch();
    assert.equal(g.waits.at(-1), 20);
  });

  it('a paused partition keeps the consumer at its own wait (a resume is read at once), and for a second after', async () => {
    const g = group(20);
    for (let i = 0; i < 60; i++) await g.fetch();
    g.set({ paused: true });
    await g.fetch();
    await g.fetch();
    assert.deepEqual(g.waits.slice(-2), [20, 20]);
    g.set({ paused: false });
    await g.fetch();
    assert.equal(g.waits.at(-1), 20);
  });

  it('a consumer whose own wait is longer keeps it', async () => {
    const g = group(5000);
    for (let i = 0; i < 3; i++) await g.fetch();
    assert.deepEqual(g.waits, [5000, 5000, 5000]);
  });
});
