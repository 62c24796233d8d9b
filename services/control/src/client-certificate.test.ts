import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { AddressPolicy } from '@switchyard/platform/net/address-policy';
import { makeTestCa, makeTestCertificate } from '@switchyard/platform/test-support/tls-material';
import { HttpError } from '@switchyard/platform/http/error-catalogue';
import { destinationSchemas, parseBody } from './api-schemas.js';
import { clientCertificateProblem } from './client-certificate.js';
import { destinationView, storedWebhooks } from './views.js';
import { retryPolicyLimits } from '@switchyard/platform/destination-retry';
import { DEFAULT_RETRY_POLICY } from '@switchyard/platform/retry-schedule';

// Throwaway certificates made by openssl for this file: a CA, a client certificate it signed and
// a second one, so a key can be given with the wrong certificate.
const dir = mkdtempSync(join(tmpdir(), 'switchyard-client-cert-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const ca = makeTestCa(dir, 'test-ca');
const client = makeTestCertificate(dir, ca, 'client', ['DNS:client.example']);
const other = makeTestCertificate(dir, ca, 'other', ['DNS:other.example']);
const encryptedKey = join(dir, 'encrypted.key');
execFileSync('openssl', ['pkey', '-in', client.keyFile, '-aes256', '-passout', 'pass:secret', '-out', encryptedKey], { stdio: 'ignore' });
const now = Date.now();

describe('clientCertificateProblem', () => {
  const cases: Array<[string, { cert: string; key: string }, { field: 'cert' | 'key'; message: RegExp } | undefined]> = [
    ['a certificate and its key pass', { cert: client.cert, key: client.key }, undefined],
    ['a certificate followed by its CA (a chain) passes', { cert: `${client.cert}${ca.pem}`, key: client.key }, undefined],
    ['text that is not PEM is refused as cert', { cert: 'hello', key: client.key }, { field: 'cert', message: /not a PEM certificate/ }],
    ['a broken PEM certificate is refused', { cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', key: client.key }, { field: 'cert', message: /does not parse/ }],
    ['a key given as the certificate is refused as cert', { cert: client.key, key: client.key }, { field: 'cert', message: /not a PEM certificate/ }],
    ['a certificate given as the key is refused as key', { cert: client.cert, key: client.cert }, { field: 'key', message: /not a PEM private key/ }],
    ['a broken PEM key is refused', { cert: client.cert, key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }, { field: 'key', message: /does not parse/ }],
    ['an encrypted key is refused, saying why', { cert: client.cert, key: readFileSync(encryptedKey, 'utf8') }, { field: 'key', message: /encrypted/ }],
    ['the key of another certificate is refused', { cert: client.cert, key: other.key }, { field: 'key', message: /does not belong/ }],
  ];
  for (const [name, input, expected] of cases) {
    it(name, () => {
      const problem = clientCertificateProblem(input, now);
      if (!expected) return assert.equal(problem, undefined);
      assert.equal(problem?.field, expected.field);
      assert.match(problem.message, expected.message);
      assert.ok(!problem.message.includes('-----BEGIN'), 'the message never quotes the PEM');
    });
  }

  it('an expired certificate is refused', () => {
    const problem = clientCertificateProblem({ cert: client.cert, key: client.key }, now + 3 * 86_400_000);
    assert.equal(problem?.field, 'cert');
    assert.match(problem.message, /expired/);
  });
});

describe('the destination document with a client certificate', () => {
  const { create, patch } = destinationSchemas(new AddressPolicy([]), retryPolicyLimits(DEFAULT_RETRY_POLICY.tiersMs));
  const body = (clientCertificate: unknown) => ({ sourceId: 's', type: 'webhooks', settings: { webhooks: [{ url: 'https://hooks.example.com/in' }, { url: 'https://b.example.com/in', clientCertificate }] } });
  const refusal = (fn: () => unknown): HttpError => {
    try { fn(); } catch (err) { if (err instanceof HttpError) return err; throw err; }
    return assert.fail('expected a 400');
  };

  it('accepts a valid pair and leaves it out where not given', () => {
    const parsed = parseBody(create, body({ cert: client.cert, key: client.key }));
    assert.equal(parsed.settings.webhooks[0]!.clientCertificate, undefined);
    assert.deepEqual(parsed.settings.webhooks[1]!.clientCertificate, { cert: client.cert, key: client.key });
    assert.equal(parseBody(patch, { settings: { webhooks: [{ url: 'https://b.example.com/in', clientCertificate: null }] } }).settings?.webhooks?.[0]?.clientCertificate, null);
  });

  it('a mismatched key is a 400 INVALID_CLIENT_CERTIFICATE naming the key field, without the PEM', () => {
    const err = refusal(() => parseBody(create, body({ cert: client.cert, key: other.key })));
    assert.deepEqual([err.status, err.code, err.field], [400, 'INVALID_CLIENT_CERTIFICATE', 'settings.webhooks[1].clientCertificate.key']);
    assert.ok(!JSON.stringify(err.toJSON()).includes('PRIVATE KEY'));
  });

  it('a bad certificate names the cert field; a missing key and an unknown field are refused too', () => {
    assert.equal(refusal(() => parseBody(create, body({ cert: 'nope', key: client.key }))).field, 'settings.webhooks[1].clientCertificate.cert');
    assert.equal(refusal(() => parseBody(create, body({ cert: client.cert }))).field, 'settings.webhooks[1].clientCertificate.key');
    assert.equal(refusal(() => parseBody(create, body({ cert: client.cert, key: client.key, passphrase: 'x' }))).code, 'UNKNOWN_FIELD');
    // A view's {"set": true} sent back is not a certificate (leaving the field out keeps it).
    assert.equal(refusal(() => parseBody(create, body({ set: true }))).field, 'settings.webhooks[1].clientCertificate.cert');
  });
});

describe('storedWebhooks and the view of a webhook', () => {
  const pair = { cert: client.cert, key: client.key };
  const current = [{ url: 'https://a.example/x', headers: {}, clientCertificate: pair }, { url: 'https://b.example/y', headers: {}, clientCertificate: null }];

  it('left out keeps the certificate stored for the same URL; null removes it; a new one replaces it; a new URL starts without', () => {
    assert.deepEqual(storedWebhooks([{ url: 'https://a.example/x', headers: { a: '1' } }], current), [{ url: 'https://a.example/x', headers: { a: '1' }, clientCertificate: pair }]);
    assert.deepEqual(storedWebhooks([{ url: 'https://a.example/x', headers: {}, clientCertificate: null }], current)[0]!.clientCertificate, null);
    const replaced = { cert: other.cert, key: other.key };
    assert.deepEqual(storedWebhooks([{ url: 'https://a.example/x', headers: {}, clientCertificate: replaced }], current)[0]!.clientCertificate, replaced);
    assert.equal(storedWebhooks([{ url: 'https://c.example/z', headers: {} }], current)[0]!.clientCertificate, null);
    assert.equal(storedWebhooks([{ url: 'https://a.example/x', headers: {} }])[0]!.clientCertificate, null, 'a create has nothing to keep');
  });

  it('a view shows {"set": true} or null, never the PEM, for every token kind', () => {
    const destination = {
      id: 'd', sourceId: 's', name: 'n', type: 'webhooks', enabled: true, sharedSecret: null, webhooks: current,
      createdAt: 0, updatedAt: 0, filter: null, standardSignatures: false, signingSecrets: [],
      rateLimit: null, retry: null, disabledReason: null, disabledAt: null, notificationTypes: [],
    };
    for (const credentials of [true, false]) {
      const view = destinationView(destination, now, credentials);
      assert.deepEqual(view.settings.webhooks.map((w) => w.clientCertificate), [{ set: true }, null]);
      const text = JSON.stringify(view);
      assert.ok(!text.includes('BEGIN') && !text.includes(client.key.slice(40, 80)), 'no PEM in the view');
    }
  });
});
