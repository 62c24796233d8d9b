import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { debugEnabled, debugLogger, excerpt } from './debug-log.js';

describe('DEBUG parsing', () => {
  const cases: [string | undefined, boolean][] = [
    [undefined, false],
    ['', false],
    ['analytics', true],
    ['foo,analytics', true],
    ['foo, analytics ,bar', true],
    ['foo analytics', true],
    ['*', true],
    ['analytic*', true],
    ['foo', false],
    ['analytics-extra', false],
    ['analyticsx', false],
    ['*,-analytics', false],
    ['-analytics,analytics', false],
  ];
  for (const [value, expected] of cases) {
    it(`DEBUG=${JSON.stringify(value)} → ${expected ? 'on' : 'off'}`, () => assert.equal(debugEnabled(value), expected));
  }

  it('prefixes lines when on and gives no logger when off', () => {
    const lines: string[] = [];
    debugLogger('analytics', (l) => lines.push(l))?.('hello');
    assert.deepEqual(lines, ['analytics: hello']);
    assert.equal(debugLogger('other', (l) => lines.push(l)), undefined);
  });

  it('cuts long text', () => {
    assert.equal(excerpt('short'), 'short');
    assert.equal(excerpt('x'.repeat(400)), `${'x'.repeat(300)}… (400 chars)`);
  });
});
