import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sumOfPartsRow } from './sum-of-parts.js';

describe('end to end vs the sum of its parts', () => {
  const parts = { bareIngestUs: 20, bareFanoutUs: 15, bareConsumeUs: 5, bareClientUs: 35, benchUs: 25 };

  it('divides the cores by the parts\' CPU per event for the ceiling, and the rate by the ceiling for the ratio', () => {
    const row = sumOfPartsRow({ rate: 18_000, cores: 2, parts, verified: true });
    assert.equal(row.baseline?.value, 20_000);
    assert.equal(row.ratio, 0.9);
    assert.equal(row.met, true);
    assert.equal(row.details.partsUsPerEvent, 100);
  });

  it('misses below 0.9 of the ceiling, and one core halves the ceiling', () => {
    const row = sumOfPartsRow({ rate: 8000, cores: 1, parts, verified: true });
    assert.equal(row.baseline?.value, 10_000);
    assert.equal(row.met, false);
  });

  it('is not verified when a part was not, or a part\'s figure is missing', () => {
    assert.equal(sumOfPartsRow({ rate: 1, cores: 2, parts, verified: false }).verified, false);
    assert.equal(sumOfPartsRow({ rate: 1, cores: 2, parts: { ...parts, bareFanoutUs: NaN }, verified: true }).verified, false);
  });

  it('reports the ceiling with the broker\'s CPU per event beside it', () => {
    assert.equal(sumOfPartsRow({ rate: 1, cores: 2, parts, verified: true, brokerUs: 100 }).details.ceilingWithBroker, 10_000);
  });
});
