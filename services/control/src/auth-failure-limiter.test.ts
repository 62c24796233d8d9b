import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AuthFailureLimiter, clientKey } from './auth-failure-limiter.js';

describe('AuthFailureLimiter', () => {
  it('answers 401 for the first `limit` failures of a window, then 429 with the seconds left in it', () => {
    const limiter = new AuthFailureLimiter({ limit: 3, windowMs: 60_000 });
    const t0 = 1_000_000;
    assert.deepEqual([0, 1, 2].map((i) => limiter.fail('10.0.0.1', t0 + i * 1000)), [{ limited: false }, { limited: false }, { limited: false }]);
    assert.deepEqual(limiter.fail('10.0.0.1', t0 + 3000), { limited: true, retryAfterSeconds: 57 });
    assert.deepEqual(limiter.fail('10.0.0.1', t0 + 59_500), { limited: true, retryAfterSeconds: 1 });
    // Another address has its own window.
    assert.deepEqual(limiter.fail('10.0.0.2', t0 + 3000), { limited: false });
  });

  it('starts a fresh window once the old one has passed', () => {
    const limiter = new AuthFailureLimiter({ limit: 1, windowMs: 10_000 });
    assert.equal(limiter.fail('a', 0).limited, false);
    assert.equal(limiter.fail('a', 9_999).limited, true);
    assert.equal(limiter.fail('a', 10_000).limited, false);
    assert.equal(limiter.fail('a', 10_001).limited, true);
  });

  it('keeps at most maxAddresses windows, dropping expired ones first, then the oldest', () => {
    const limiter = new AuthFailureLimiter({ limit: 1, windowMs: 1000, maxAddresses: 3 });
    limiter.fail('a', 0); limiter.fail('b', 500); limiter.fail('c', 900);
    limiter.fail('d', 1200); // a expired: dropped
    assert.equal(limiter.size, 3);
    assert.equal(limiter.fail('b', 1300).limited, true, 'b is still counted');
    limiter.fail('e', 1300); // full and nothing expired: the oldest (b) goes
    assert.equal(limiter.size, 3);
    assert.equal(limiter.fail('b', 1350).limited, false, 'b was forgotten');
  });

  it('refuses nonsensical settings', () => {
    assert.throws(() => new AuthFailureLimiter({ limit: 0, windowMs: 1000 }), RangeError);
    assert.throws(() => new AuthFailureLimiter({ limit: 1, windowMs: 0 }), RangeError);
  });
});

describe('clientKey', () => {
  it('counts IPv4 by address, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64', () => {
    const cases: Array<[string, string]> = [
      ['127.0.0.1', '127.0.0.1'],
      ['::ffff:10.1.2.3', '10.1.2.3'],
      ['::FFFF:10.1.2.3', '10.1.2.3'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
      ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
      ['2001:0db8:0001:0002:ffff::1', '2001:db8:1:2::/64'],
      ['2001:db8::1', '2001:db8:0:0::/64'],
      ['::1', '0:0:0:0::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ];
    for (const [address, key] of cases) assert.equal(clientKey(address), key, address);
    assert.equal(clientKey('2001:db8:1:2::9'), clientKey('2001:db8:1:2:ffff:ffff:ffff:ffff'));
    assert.notEqual(clientKey('2001:db8:1:2::9'), clientKey('2001:db8:1:3::9'));
  });
});
