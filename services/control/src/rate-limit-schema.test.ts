import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import { HttpError } from '@switchyard/platform/http/error-catalogue';
import { destinationSchemas, parseBody } from './api-schemas.js';

const { create, patch } = destinationSchemas(new AddressPolicy([]), retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs));
const base = { sourceId: 'src_1', type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/in' }] } };

describe('rateLimit in destination bodies', () => {
  it('takes an integer perSecond from 1 to 10 000, or null to remove it', () => {
    assert.deepEqual(parseBody(create, { ...base, rateLimit: { perSecond: 1 } }).rateLimit, { perSecond: 1 });
    assert.deepEqual(parseBody(patch, { rateLimit: { perSecond: 10_000 } }).rateLimit, { perSecond: 10_000 });
    assert.equal(parseBody(patch, { rateLimit: null }).rateLimit, null);
    assert.equal(parseBody(patch, {}).rateLimit, undefined);
  });

  it('refuses anything else with a 400 naming rateLimit.perSecond', () => {
    for (const perSecond of [0, 10_001, 2.5, '20', null]) {
      assert.throws(() => parseBody(patch, { rateLimit: { perSecond } }), (err: unknown) => err instanceof HttpError && err.status === 400 && err.field === 'rateLimit.perSecond', String(perSecond));
    }
    assert.throws(() => parseBody(patch, { rateLimit: { perSecond: 5, burst: 2 } }), (err: unknown) => err instanceof HttpError && err.status === 400 && err.code === 'UNKNOWN_FIELD');
    assert.throws(() => parseBody(patch, { rateLimit: 20 }), (err: unknown) => err instanceof HttpError && err.status === 400 && err.field === 'rateLimit');
  });
});
