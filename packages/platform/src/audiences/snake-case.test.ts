import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { snakeCase } from './snake-case.js';

describe('snakeCase: the property name of an audience', () => {
  const cases: Array<[string, string, string]> = [
    ['spaces become one underscore', 'Frequent Buyers', 'frequent_buyers'],
    ['punctuation runs become one underscore, ends trimmed', '  High-Value (EU) Customers!! ', 'high_value_eu_customers'],
    ['capitals are lower-cased, digits stay joined', 'VIP2024', 'vip2024'],
    ['digits are words of their own when spaced', 'Top 10 Users', 'top_10_users'],
    ['accents are dropped', 'Café Lovers', 'cafe_lovers'],
    ['umlauts dropped, ß spelled out', 'Größte Käufer', 'grosste_kaufer'],
    ['capital ẞ spelled out', 'GROẞE', 'grosse'],
    ['other undecomposable Latin letters spelled out', 'Ærø Øl', 'aero_ol'],
    ['Turkish dotted capital I', 'İstanbul Şehir', 'istanbul_sehir'],
    ['camelCase boundary', 'frequentBuyers', 'frequent_buyers'],
    ['acronym before a word', 'HTMLParser', 'html_parser'],
    ['acronym inside camelCase', 'getHTTPResponseCode', 'get_http_response_code'],
    ['emoji are separators', '🔥 Hot Leads 🔥', 'hot_leads'],
    ['emoji with variation selector', '❤️ Fans', 'fans'],
    ['keycap digit keeps its digit', '1️⃣ Club', '1_club'],
    ['full-width letters folded', 'ＶＩＰ Users', 'vip_users'],
    ['Japanese kept whole (voicing marks included)', '日本のユーザー', '日本のユーザー'],
    ['Cyrillic kept, lower-cased, й intact', 'Новые Клиенты й', 'новые_клиенты_й'],
    ['Devanagari vowel signs kept', 'हिन्दी भाषा', 'हिन्दी_भाषा'],
    ['nothing left → audience', '🔥🔥 !!', 'audience'],
    ['empty → audience', '', 'audience'],
    ['already snake_case is kept', 'top_10_users', 'top_10_users'],
  ];
  for (const [what, name, expected] of cases) {
    it(`${what}: ${JSON.stringify(name)} → ${expected}`, () => {
      assert.equal(snakeCase(name), expected);
      assert.equal(snakeCase(snakeCase(name)), expected, 'applying it twice changes nothing');
    });
  }
});
