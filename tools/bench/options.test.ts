import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseOptions, SCENARIOS } from './options.js';

test('no flags: a full run of every scenario, built services, JSON under bench-results', () => {
  const o = parseOptions([]);
  assert.equal(o.mode, 'full');
  assert.deepEqual([...o.only], [...SCENARIOS]);
  assert.equal(o.out, undefined);
  assert.equal(o.profile, false);
  assert.equal(o.taskHops, false);
  assert.equal(o.source, false);
});

test('--tiny wins over --quick; --out, --profile, --task-hops and --source are read', () => {
  assert.equal(parseOptions(['--quick']).mode, 'quick');
  assert.equal(parseOptions(['--quick', '--tiny']).mode, 'tiny');
  const o = parseOptions(['--quick', '--out', '/tmp/r.json', '--profile', '--task-hops', '--source']);
  assert.deepEqual({ out: o.out, profile: o.profile, taskHops: o.taskHops, source: o.source }, { out: '/tmp/r.json', profile: true, taskHops: true, source: true });
});

test('--only picks the named scenarios and refuses an unknown or empty list', () => {
  assert.deepEqual([...parseOptions(['--only', 'isolation,attempts']).only], ['isolation', 'attempts']);
  assert.throws(() => parseOptions(['--only', 'isolation,nope']), /--only takes a comma-separated list/);
  assert.throws(() => parseOptions(['--only']), /got ""/);
});
