/**
 * A TLS client certificate as the auth service and the business API see it (RFC 8705): its
 * subject DN in RFC 4514's string form (`tls_client_auth`) and its SHA-256 thumbprint (the token's
 * `cnf["x5t#S256"]`). It comes from the connection (`coregate serve --tls-client-ca`) or, behind a
 * TLS-terminating proxy, from the header the proxy sets (`--client-certificate-header`), believed
 * only from `--trusted-proxy` addresses (client-certificates.ts decides which).
 */
import { createHash, type X509Certificate } from 'node:crypto';

export interface ClientCertificate {
  /** RFC 4514: the most specific RDN first, e.g. `CN=treasury-app,O=Example Bank,C=DE`. */
  subjectDn: string;
  /** base64url SHA-256 of the certificate's DER: `x5t#S256`. */
  thumbprint: string;
}

export function clientCertificateOf(certificate: X509Certificate): ClientCertificate {
  return { subjectDn: rfc4514Subject(certificate.subject), thumbprint: createHash('sha256').update(certificate.raw).digest('base64url') };
}

/**
 * Node writes a subject one attribute per line, the certificate's order (the least specific
 * first); RFC 4514 joins them with commas, the most specific first, escaping what must be.
 */
export function rfc4514Subject(nodeSubject: string): string {
  return nodeSubject
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .map((line) => {
      const equals = line.indexOf('=');
      const type = line.slice(0, equals);
      const value = line.slice(equals + 1);
      return `${type}=${escapeValue(value)}`;
    })
    .join(',');
}

function escapeValue(value: string): string {
  return value
    .replace(/[\\,+"<>;=]/g, (character) => `\\${character}`)
    .replace(/^[ #]/, (character) => `\\${character}`)
    .replace(/ $/, '\\ ');
}

/**
 * Two DNs as RFC 4514 strings, the same names: attribute types without regard to case, spaces
 * around separators ignored, values compared without regard to case (as most directories match
 * them), escapes read.
 */
export function sameDistinguishedName(a: string, b: string): boolean {
  const left = normalizedRdns(a);
  const right = normalizedRdns(b);
  return left !== undefined && right !== undefined && left.length === right.length && left.every((rdn, index) => rdn === right[index]);
}

function normalizedRdns(dn: string): string[] | undefined {
  const rdns: string[] = [];
  let current = '';
  for (let index = 0; index < dn.length; index += 1) {
    const character = dn[index] as string;
    if (character === '\\' && index + 1 < dn.length) {
      current += character + (dn[index + 1] as string);
      index += 1;
    } else if (character === ',') {
      rdns.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  rdns.push(current);
  const normalized = rdns.map((rdn) => {
    const equals = rdn.indexOf('=');
    if (equals < 1) return undefined;
    const type = rdn.slice(0, equals).trim().toUpperCase();
    const value = rdn
      .slice(equals + 1)
      .trim()
      .replace(/\\(.)/g, '$1')
      .toLowerCase();
    return `${type}=${value}`;
  });
  return normalized.every((rdn) => rdn !== undefined) ? (normalized as string[]) : undefined;
}
