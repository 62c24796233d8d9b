import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { makeTestCa, makeTestCertificate } from '../test-support/tls-material.js';
import { createSchemaRegistry, registryConnection } from './registry-connection.js';

/** A registry stand-in: answers a schema lookup and a config PUT, only with the expected Basic credentials. */
function handler(seen: string[]) {
  return (req: IncomingMessage, res: ServerResponse) => {
    seen.push(`${req.method} ${req.url}`);
    if (req.headers.authorization !== `Basic ${Buffer.from('reg-user:pa:ss').toString('base64')}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error_code: 401, message: 'Unauthorized' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.schemaregistry.v1+json' });
    res.end(req.method === 'PUT' ? '{"compatibility":"BACKWARD"}' : JSON.stringify({ schema: '{"type":"record","name":"R","namespace":"t","fields":[]}' }));
  };
}

async function listen(server: ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('registry connection: Basic auth and a CA of its own', () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-registry-tls-'));
  const ca = makeTestCa(dir, 'registry-ca');
  const otherCa = makeTestCa(dir, 'other-ca');
  const cert = makeTestCertificate(dir, ca, 'registry', ['DNS:localhost']);
  const seen: string[] = [];
  const http = createHttpServer(handler(seen));
  const https = createHttpsServer({ cert: cert.cert, key: cert.key }, handler(seen));
  let httpPort = 0;
  let httpsPort = 0;
  before(async () => { httpPort = await listen(http); httpsPort = await listen(https as unknown as ReturnType<typeof createHttpServer>); });
  after(() => { http.close(); https.close(); });

  const auth = { username: 'reg-user', password: 'pa:ss' };

  it('sends the credentials with the client library\'s requests and with its own PUTs', async () => {
    const { registry, put } = createSchemaRegistry({ registryUrl: `http://127.0.0.1:${httpPort}`, registryAuth: auth });
    await registry.getSchema(1);
    assert.equal((await put('/config/s', { compatibility: 'BACKWARD' })).status, 200);
  });

  it('without credentials the registry\'s 401 reaches the caller', async () => {
    const { registry, put } = createSchemaRegistry({ registryUrl: `http://127.0.0.1:${httpPort}` });
    await assert.rejects(registry.getSchema(1), (err: { status?: number }) => err.status === 401);
    assert.equal((await put('/config/s', {})).status, 401);
  });

  it('trusts an https registry whose certificate chains to SCHEMA_REGISTRY_SSL_CA_FILE', async () => {
    const { registry, put } = createSchemaRegistry({ registryUrl: `https://localhost:${httpsPort}`, registryAuth: auth, registryCa: ca.pem });
    await registry.getSchema(1);
    assert.equal((await put('/config/s', {})).status, 200);
  });

  it('refuses a certificate from another CA, and one that does not name the host', async () => {
    const untrusted = createSchemaRegistry({ registryUrl: `https://localhost:${httpsPort}`, registryAuth: auth, registryCa: otherCa.pem });
    await assert.rejects(untrusted.put('/config/s', {}), (err: NodeJS.ErrnoException) => err.code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    await assert.rejects(untrusted.registry.getSchema(1));
    // The certificate names localhost only.
    const wrongName = createSchemaRegistry({ registryUrl: `https://127.0.0.1:${httpsPort}`, registryAuth: auth, registryCa: ca.pem });
    await assert.rejects(wrongName.put('/config/s', {}), (err: NodeJS.ErrnoException) => err.code === 'ERR_TLS_CERT_ALTNAME_INVALID');
    await assert.rejects(wrongName.registry.getSchema(1));
  });

  it('is built from the parsed variables', () => {
    assert.deepEqual(
      registryConnection({ SCHEMA_REGISTRY_URL: 'https://r', SCHEMA_REGISTRY_BASIC_AUTH_USER_INFO: auth, SCHEMA_REGISTRY_SSL_CA_FILE: { path: '/ca.pem', pem: 'PEM' } }),
      { registryUrl: 'https://r', registryAuth: auth, registryCa: 'PEM' },
    );
    assert.deepEqual(registryConnection({ SCHEMA_REGISTRY_URL: 'http://r' }), { registryUrl: 'http://r' });
  });
});
