/**
 * Where a request's TLS client certificate comes from (RFC 8705; docs/auth.md, "Mutual TLS"): the
 * connection, when coregate serves TLS itself and asks for client certificates (`--tls-client-ca`:
 * a certificate is optional at the handshake, and one the CA did not issue is never taken), or,
 * behind a TLS-terminating proxy, the header it sets (`--client-certificate-header`: the PEM,
 * URL-encoded), believed only from `--trusted-proxy` addresses and only for a certificate the CA
 * issued. The proxy must set the header itself on every request, replacing one the client sent.
 */
import type { IncomingMessage } from 'node:http';
import { X509Certificate } from 'node:crypto';
import { TLSSocket } from 'node:tls';
import { clientCertificateOf, type ClientCertificate } from './client-certificate.js';

export interface ClientCertificatePolicy {
  /** The CA certificates that issue client certificates (`--tls-client-ca`). */
  caCertificates: readonly X509Certificate[];
  /** The header a trusted proxy puts the client's certificate in; absent: none is read. */
  header?: string | undefined;
  /** The proxies' addresses (`--trusted-proxy`), as the socket reports its peer. */
  trustedProxies: readonly string[];
  /** Whose time decides whether a certificate from the header is valid (epoch ms). */
  now: () => number;
}

export class ClientCertificates {
  readonly #policy: ClientCertificatePolicy;
  /** The certificate of a TLS connection, read once per connection. */
  readonly #ofSocket = new WeakMap<TLSSocket, ClientCertificate | null>();

  constructor(policy: ClientCertificatePolicy) {
    this.#policy = policy;
  }

  of(request: IncomingMessage): ClientCertificate | undefined {
    const { socket } = request;
    if (socket instanceof TLSSocket) return this.#fromConnection(socket);
    const header = this.#policy.header;
    if (header === undefined || !this.#policy.trustedProxies.includes(normalizedAddress(socket.remoteAddress))) return undefined;
    // One header, set by the proxy: two (a proxy that appends, or passes the client's own on) take
    // nobody's certificate, since Node would join them and the first one could be the client's.
    const name = header.toLowerCase();
    let value: string | undefined;
    for (let index = 0; index < request.rawHeaders.length; index += 2) {
      if (request.rawHeaders[index]?.toLowerCase() !== name) continue;
      if (value !== undefined) return undefined;
      value = request.rawHeaders[index + 1] ?? '';
    }
    // URL-encoded PEM has no comma: one is two values joined (by a proxy, or by the client).
    if (value === undefined || value === '' || value.length > 16_384 || value.includes(',')) return undefined;
    return this.#fromProxyHeader(value);
  }

  #fromConnection(socket: TLSSocket): ClientCertificate | undefined {
    const known = this.#ofSocket.get(socket);
    if (known !== undefined) return known ?? undefined;
    // `authorized`: the handshake verified the chain against --tls-client-ca.
    const certificate = socket.authorized ? socket.getPeerX509Certificate() : undefined;
    const found = certificate === undefined ? null : clientCertificateOf(certificate);
    this.#ofSocket.set(socket, found);
    return found ?? undefined;
  }

  #fromProxyHeader(value: string): ClientCertificate | undefined {
    let certificate: X509Certificate;
    try {
      const pem = decodeURIComponent(value);
      // Exactly one PEM certificate and nothing else: OpenSSL reads the first block of several
      // (in other armours too, X509 CERTIFICATE, TRUSTED CERTIFICATE) and ignores the rest.
      if (!singleCertificatePem.test(pem.trim())) return undefined;
      certificate = new X509Certificate(pem);
    } catch {
      return undefined;
    }
    const now = this.#policy.now();
    if (Date.parse(certificate.validFrom) > now || Date.parse(certificate.validTo) < now) return undefined;
    const issuedByCa = this.#policy.caCertificates.some((ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey));
    return issuedByCa ? clientCertificateOf(certificate) : undefined;
  }
}

const singleCertificatePem = /^-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----$/;

/** `::ffff:127.0.0.1` as `127.0.0.1`: how an operator writes the proxy's IPv4 address. */
function normalizedAddress(address: string | undefined): string {
  if (address === undefined) return '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** The CA certificates of a PEM file (one or several). */
export function caCertificatesOf(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((block) => new X509Certificate(block));
}
