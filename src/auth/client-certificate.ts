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
 * Node writes a subject one RDN per line, the certificate's order (the least specific first),
 * its values already escaped as RFC 4514 wants and a multi-valued RDN's attributes joined by
 * " + "; RFC 4514 joins the RDNs with commas, the most specific first.
 */
export function rfc4514Subject(nodeSubject: string): string {
  return nodeSubject
    .split('\n')
    .filter((line) => line !== '')
    .reverse()
    .map((line) => line.split(' + ').join('+'))
    .join(',');
}
