import { createHash, type X509Certificate } from 'node:crypto';

/**
 * The pin is SHA-256 over the certificate's SubjectPublicKeyInfo, base64 (the HPKP / `curl --pinnedpubkey`
 * format). Pinning the key rather than the certificate survives a BMC re-issuing its self-signed cert with the
 * same key, which iLO and iDRAC do on renewal.
 */
export function spkiSha256(cert: X509Certificate): string {
  const spki = cert.publicKey.export({ type: 'spki', format: 'der' });
  return createHash('sha256').update(spki).digest('base64');
}
