import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';
import { HttpError } from '@switchyard/platform/http/error-catalogue';
import { destinationSchemas, parseBody } from './api-schemas.js';

const schemas = destinationSchemas(new AddressPolicy([]), retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs));
const create = (retry: unknown) => ({ sourceId: 'src', type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/in' }] }, retry });

describe('admin API: a destination\'s retry policy in request bodies', () => {
  it('create: parsed to milliseconds; absent or null means the deployment\'s policy', () => {
    assert.deepEqual(parseBody(schemas.create, create({ tiers: ['30s', '5m'], deadline: '4h' })).retry, { tiersMs: [30_000, 300_000], deadlineMs: 14_400_000 });
    assert.equal(parseBody(schemas.create, create(null)).retry, null);
    assert.equal(parseBody(schemas.create, { ...create(undefined), retry: undefined }).retry, undefined);
  });

  it('patch: null removes it', () => {
    assert.equal(parseBody(schemas.patch, { retry: null }).retry, null);
  });

  const refused: Array<[string, unknown, string, string]> = [
    ['a tier below the shortest tier topic', { tiers: ['5s'], deadline: '4h' }, 'retry.tiers[0]', 'INVALID_RETRY_POLICY'],
    ['a tier above the longest', { tiers: ['30s', '2h'], deadline: '4h' }, 'retry.tiers[1]', 'INVALID_RETRY_POLICY'],
    ['a tier that is not a duration', { tiers: ['soon'], deadline: '4h' }, 'retry.tiers[0]', 'INVALID_RETRY_POLICY'],
    ['no tiers', { tiers: [], deadline: '4h' }, 'retry.tiers', 'INVALID_RETRY_POLICY'],
    ['a deadline over 24 h', { tiers: ['30s'], deadline: '48h' }, 'retry.deadline', 'INVALID_RETRY_POLICY'],
    ['a missing deadline', { tiers: ['30s'] }, 'retry.deadline', 'INVALID_FIELD'],
    ['a number for a tier', { tiers: [30], deadline: '4h' }, 'retry.tiers[0]', 'INVALID_FIELD'],
    ['an unknown key', { tiers: ['30s'], deadline: '4h', jitter: true }, 'retry.jitter', 'UNKNOWN_FIELD'],
  ];
  for (const [name, retry, field, code] of refused) {
    it(`refuses ${name}: 400 ${code} naming ${field}`, () => {
      assert.throws(() => parseBody(schemas.create, create(retry)), (err: unknown) => {
        assert.ok(err instanceof HttpError);
        assert.deepEqual([err.status, err.code, err.field], [400, code, field]);
        return true;
      });
    });
  }
});
