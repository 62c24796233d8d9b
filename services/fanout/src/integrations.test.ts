import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { webhooksEnabledBy } from './integrations.js';

describe('webhooksEnabledBy: the integrations map for the Webhooks destination', () => {
  // All × Webhooks, each false / true / absent: the own key wins, else All, else enabled.
  const values = [false, true, undefined] as const;
  const expected = (all: boolean | undefined, own: boolean | undefined): boolean => own ?? all ?? true;
  for (const all of values) {
    for (const own of values) {
      const map: Record<string, boolean> = {};
      if (all !== undefined) map['All'] = all;
      if (own !== undefined) map['Webhooks'] = own;
      const want = expected(all, own);
      it(`All ${String(all)}, Webhooks ${String(own)} → ${want ? 'enabled' : 'disabled'}`, () => {
        assert.equal(webhooksEnabledBy(JSON.stringify(map)), want);
      });
    }
  }

  const cases: Array<[string, string | null, boolean]> = [
    ['empty map', '{}', true],
    ['other destinations only', '{"Mixpanel":false,"Amplitude":true}', true],
    ['wrong case "webhooks" is another destination', '{"webhooks":false}', true],
    ['wrong case "WEBHOOKS" is another destination', '{"WEBHOOKS":false}', true],
    ['wrong case true does not re-enable under All false', '{"All":false,"webhooks":true}', false],
    ['wrong case "WEBHOOKS" true does not re-enable', '{"All":false,"WEBHOOKS":true}', false],
    ['wrong case "all" is not All', '{"all":false}', true],
    ['object value (destination options) enables', '{"Webhooks":{"option":1}}', true],
    ['object value enables under All false', '{"All":false,"Webhooks":{}}', true],
    ['string value is ignored', '{"All":false,"Webhooks":"true"}', false],
    ['number value is ignored', '{"All":false,"Webhooks":1}', false],
    ['null value is ignored', '{"All":false,"Webhooks":null}', false],
    ['null value with no All', '{"Webhooks":null}', true],
    ['array value is ignored', '{"All":false,"Webhooks":[true]}', false],
    ['non-boolean All is ignored', '{"All":"false"}', true],
    ['null JSON (no map)', null, true],
    ['JSON null', 'null', true],
    ['malformed JSON', '{"All":false', true],
    ['empty text', '', true],
    ['array', '[{"All":false}]', true],
    ['a number', '0', true],
    ['a string', '"All"', true],
  ];
  for (const [name, json, want] of cases) {
    it(`${name} → ${want ? 'enabled' : 'disabled'}`, () => {
      assert.equal(webhooksEnabledBy(json), want);
    });
  }
});
