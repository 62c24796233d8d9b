// The secured local stack's TLS material, made with openssl at every start: a certificate
// authority that lives only as long as start-up (its key is deleted once it has signed), and the
// broker's key and certificate (127.0.0.1 and localhost, for serving clients and as the broker's
// client certificate towards its KRaft controller listener). PEM throughout: Kafka reads PEM key
// and trust stores (ssl.keystore.type=PEM), Node and Java clients read the CA as it is.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface BrokerTls {
  /** The CA certificate clients trust (KAFKA_SSL_CA_FILE). */
  caFile: string;
  /** The broker's private key (PKCS#8, unencrypted) and certificate chain in one PEM file, mode 0600. */
  keystoreFile: string;
}

/** The broker certificate's subject common name; an SSL client presenting it maps to User:<name>. */
export const BROKER_CERT_NAME = 'switchyard-broker';

/** Whether openssl can be run (the secured stack needs it). */
export async function opensslVersion(): Promise<string | undefined> {
  try {
    return (await run('openssl', ['version'])).stdout.trim();
  } catch {
    return undefined;
  }
}

/** Makes a fresh CA and broker certificate in dir (mode 0700), valid for `days`. */
export async function makeBrokerTls(dir: string, days = 30): Promise<BrokerTls> {
  if (!(await opensslVersion())) {
    throw new Error('openssl not found: the secured stack makes its CA and broker certificate with it (Debian: apt-get install openssl)');
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const file = (name: string) => join(dir, name);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  try {
    await openssl(['req', '-x509', ...ec, '-keyout', file('ca.key'), '-out', file('ca.pem'), '-days', String(days),
      '-subj', '/CN=Switchyard local stack CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    await openssl(['req', '-new', ...ec, '-keyout', file('broker.key'), '-out', file('broker.csr'), '-subj', `/CN=${BROKER_CERT_NAME}`]);
    writeFileSync(file('broker.ext'), [
      'basicConstraints=CA:FALSE',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth,clientAuth',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '',
    ].join('\n'));
    await openssl(['x509', '-req', '-in', file('broker.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-set_serial', `0x${randomBytes(12).toString('hex')}`,
      '-days', String(days), '-extfile', file('broker.ext'), '-out', file('broker.crt')]);
    const keystoreFile = file('broker-keystore.pem');
    writeFileSync(keystoreFile, readFileSync(file('broker.key'), 'utf8') + readFileSync(file('broker.crt'), 'utf8') + readFileSync(file('ca.pem'), 'utf8'), { mode: 0o600 });
    chmodSync(keystoreFile, 0o600);
    chmodSync(file('ca.pem'), 0o644);
    return { caFile: file('ca.pem'), keystoreFile };
  } finally {
    // Nothing signs after start-up; the broker's key lives on in its key store only.
    for (const name of ['ca.key', 'broker.key', 'broker.csr', 'broker.ext', 'broker.crt']) rmSync(file(name), { force: true });
  }
}

async function openssl(args: string[]): Promise<void> {
  try {
    await run('openssl', args);
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.trim() || e.message}`);
  }
}
