/**
 * Where a request's TLS client certificate comes from (RFC 8705, CONTRACT §13): the connection,
 * when coregate serves TLS itself and asks for client certificates (`--tls-client-ca`: a
 * certificate is optional at the handshake, and one the CA did not issue is never taken), or, behind
 * a TLS-terminating proxy, the header it sets (`--client-certificate-header`: the PEM,
 * URL-encoded), believed only from `--trusted-proxy` addresses and only for a certificate the CA issued.
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
    const value = request.headers[header.toLowerCase()];
    if (typeof value !== 'string' || value === '' || value.length > 16_384) return undefined;
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
      certificate = new X509Certificate(decodeURIComponent(value));
    } catch {
      return undefined;
    }
    const now = this.#policy.now();
    if (Date.parse(certificate.validFrom) > now || Date.parse(certificate.validTo) < now) return undefined;
    const issuedByCa = this.#policy.caCertificates.some((ca) => certificate.checkIssued(ca) && certificate.verify(ca.publicKey));
    return issuedByCa ? clientCertificateOf(certificate) : undefined;
  }
}

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
