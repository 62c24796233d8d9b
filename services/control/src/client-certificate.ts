import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';

/**
 * The checks a webhook's client certificate passes before it is stored: the certificate and the
 * key parse as PEM with node:crypto (what delivery's TLS handshake will load), the key is not
 * encrypted (delivery has no passphrase to open it), the key belongs to the certificate, and the
 * certificate has not expired. Pure apart from the clock it is given; error messages never quote
 * the PEM.
 */
export interface ClientCertificateInput { cert: string; key: string }
export interface CertificateProblem { field: 'cert' | 'key'; message: string }

/** A certificate with its intermediates fits well within this; more is not a certificate. */
export const MAX_PEM_CHARS = 32 * 1024;

export function clientCertificateProblem({ cert, key }: ClientCertificateInput, now: number): CertificateProblem | undefined {
  if (!cert.includes('-----BEGIN CERTIFICATE-----')) return { field: 'cert', message: 'not a PEM certificate (expected a BEGIN CERTIFICATE block)' };
  let x509: X509Certificate;
  try { x509 = new X509Certificate(cert); } catch { return { field: 'cert', message: 'the PEM certificate does not parse' }; }
  const validTo = Date.parse(x509.validTo);
  if (Number.isFinite(validTo) && validTo < now) return { field: 'cert', message: `the certificate expired on ${new Date(validTo).toISOString()}` };

  // A passphrase-protected key fails to parse with a message about cancelled prompts; say why.
  if (/ENCRYPTED/.test(key)) return { field: 'key', message: 'the private key is encrypted: give it unencrypted' };
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key)) return { field: 'key', message: 'not a PEM private key (expected a BEGIN PRIVATE KEY block, or an RSA or EC one)' };
  let privateKey: KeyObject;
  try { privateKey = createPrivateKey(key); } catch { return { field: 'key', message: 'the PEM private key does not parse' }; }
  let matches = false;
  try { matches = x509.checkPrivateKey(privateKey); } catch { matches = false; }
  if (!matches) return { field: 'key', message: 'the private key does not belong to the certificate' };
  return undefined;
}
