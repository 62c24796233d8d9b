import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withCertificateFiles } from './seed.js';

describe('seed file: client certificates from files', () => {
  const files: Record<string, string> = { '/etc/seed/tls/client.pem': 'CERT', '/run/secrets/client.key': 'KEY' };
  const read = (path: string) => { const text = files[path]; if (text === undefined) throw new Error('ENOENT'); return text; };
  const seed = (clientCertificate: unknown) => ({ destinations: [{ id: 'd', settings: { webhooks: [{ url: 'https://a.example/x' }, { url: 'https://b.example/y', clientCertificate }] } }] });

  it('reads certFile and keyFile (relative to the seed file) into cert and key; inline PEM and other webhooks stay as they are', () => {
    const out = withCertificateFiles(seed({ certFile: 'tls/client.pem', keyFile: '/run/secrets/client.key' }), '/etc/seed', read);
    assert.deepEqual(out, seed({ cert: 'CERT', key: 'KEY' }));
    assert.deepEqual(withCertificateFiles(seed({ cert: 'C', key: 'K' }), '/etc/seed', read), seed({ cert: 'C', key: 'K' }));
    assert.deepEqual(withCertificateFiles(seed(null), '/etc/seed', read), seed(null));
  });

  it('a file that cannot be read stops the seed, naming the entry and the file', () => {
    assert.throws(() => withCertificateFiles(seed({ certFile: 'tls/client.pem', keyFile: 'missing.key' }), '/etc/seed', read),
      /seed destinations\[0\]\.settings\.webhooks\[1\]\.clientCertificate\.keyFile: cannot read missing\.key/);
  });
});
