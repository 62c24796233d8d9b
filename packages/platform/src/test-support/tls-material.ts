// Throwaway TLS material for tests, made with openssl: a CA and a server certificate it signed for
// the given names. Keys are unencrypted and live in the test's own temporary directory.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface TestCa { name: string; certFile: string; keyFile: string; pem: string }
export interface TestCertificate { certFile: string; keyFile: string; cert: string; key: string }

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeTestCa(dir: string, name: string): TestCa {
  const certFile = join(dir, `${name}.pem`);
  const keyFile = join(dir, `${name}.key`);
  openssl(['req', '-x509', ...EC, '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', `/CN=${name}`,
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { name, certFile, keyFile, pem: readFileSync(certFile, 'utf8') };
}

/** A certificate signed by `ca` for `altNames` (e.g. `DNS:localhost`, `IP:127.0.0.1`). */
export function makeTestCertificate(dir: string, ca: TestCa, name: string, altNames: string[]): TestCertificate {
  const file = (ext: string) => join(dir, `${name}.${ext}`);
  openssl(['req', '-new', ...EC, '-keyout', file('key'), '-out', file('csr'), '-subj', `/CN=${name}`]);
  writeFileSync(file('ext'), `basicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=${altNames.join(',')}\n`);
  openssl(['x509', '-req', '-in', file('csr'), '-CA', ca.certFile, '-CAkey', ca.keyFile, '-set_serial', `0x${randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', file('ext'), '-out', file('crt')]);
  return { certFile: file('crt'), keyFile: file('key'), cert: readFileSync(file('crt'), 'utf8'), key: readFileSync(file('key'), 'utf8') };
}
