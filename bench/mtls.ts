/**
 * The mutual-TLS paths (docs/auth.md "Mutual TLS", issue 42): coregate serving TLS itself with
 * client certificates on (`--tls-cert --tls-key --tls-client-ca`), a `tls_client_auth` client whose
 * tokens are bound to its certificate (`cnf["x5t#S256"]`), and retrieves with that token over
 * connections presenting the certificate (autocannon's connections are kept: one handshake each).
 * Beside it, the bearer retrieve over the same TLS server: what TLS itself costs, apart from the
 * binding. The CA, the server's and the client's certificates are made with openssl per run, in
 * the run's directory: no private key lives in the repository.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { client, realms } from './data.js';
import type { Scenario } from './load.js';

export const mtlsRealm = 'bench-mtls';
export const mtlsClientId = 'bench-mtls-app';
/** The client certificate's subject as the client's registration names it (RFC 4514). */
const subjectDn = 'CN=bench-mtls-app, O=Bench Partner, C=DE';

export interface MtlsMaterial {
  serverCert: string;
  serverKey: string;
  /** The CA that issues client certificates (`--tls-client-ca`). */
  clientCa: string;
  /** The client's certificate and key, read. */
  client: { cert: Buffer; key: Buffer };
}

/** Makes the certificates in `dir` with openssl; undefined where openssl is missing. */
export function mtlsMaterial(dir: string): MtlsMaterial | undefined {
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: 'ignore', cwd: dir });
  try {
    openssl(['req', '-x509', ...ecKey, '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', 'bench-server.key', '-out', 'bench-server.pem']);
    openssl(['req', '-x509', ...ecKey, '-subj', '/CN=bench-partner-ca', '-days', '1', '-keyout', 'bench-ca.key', '-out', 'bench-ca.pem']);
    openssl(['req', ...ecKey, '-subj', '/C=DE/O=Bench Partner/CN=bench-mtls-app', '-keyout', 'bench-client.key', '-out', 'bench-client.csr']);
    openssl(['x509', '-req', '-in', 'bench-client.csr', '-CA', 'bench-ca.pem', '-CAkey', 'bench-ca.key', '-CAcreateserial', '-days', '1', '-out', 'bench-client.pem']);
  } catch {
    return undefined;
  }
  return {
    serverCert: join(dir, 'bench-server.pem'),
    serverKey: join(dir, 'bench-server.key'),
    clientCa: join(dir, 'bench-ca.pem'),
    client: { cert: readFileSync(join(dir, 'bench-client.pem')), key: readFileSync(join(dir, 'bench-client.key')) },
  };
}

/** The bench data's realm for it: ES256 tokens, bound to the client's certificate. */
export function mtlsRealmData(): Record<string, unknown> {
  return {
    name: mtlsRealm,
    profile: 'fapi2',
    signatureAlgorithm: 'ES256',
    accessTokenLifespanSeconds: 3600,
    clients: [
      {
        clientId: mtlsClientId,
        tokenEndpointAuthMethod: 'tls_client_auth',
        tlsClientAuthSubjectDn: subjectDn,
        tlsClientCertificateBoundAccessTokens: true,
        scopes: ['termDeposit:initiate', 'termDeposit:retrieve'],
        technicalUser: 'svc-bench',
        defaultWorkstation: 'WS-BENCH-01',
      },
    ],
  };
}

/** `coregate serve`'s flags for TLS with client certificates. */
export function mtlsServeArgs(material: MtlsMaterial): string[] {
  return ['--tls-cert', material.serverCert, '--tls-key', material.serverKey, '--tls-client-ca', material.clientCa];
}

/** One request over TLS with the client's certificate (the server's own certificate is the bench's: not checked). */
export function httpsRequest(url: string, material: MtlsMaterial | undefined, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: options.method ?? 'GET', headers: options.headers, rejectUnauthorized: false, ...(material ? material.client : {}) }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
    });
    sent.on('error', reject);
    sent.end(options.body);
  });
}

/** A token of the tls_client_auth client, bound to its certificate. */
export async function mtlsToken(url: string, material: MtlsMaterial): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: mtlsClientId }).toString();
  const answer = await httpsRequest(`${url}/realms/${mtlsRealm}/protocol/openid-connect/token`, material, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const parsed = JSON.parse(answer.text) as { access_token?: string };
  if (answer.status !== 200 || !parsed.access_token) throw new Error(`the mTLS token request answered ${answer.status}: ${answer.text}`);
  return parsed.access_token;
}

/** A bearer token of the bench's secret client (the RS256 realm, as the plain retrieve's), from the TLS server. */
export async function tlsSecretToken(url: string): Promise<string> {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }).toString();
  const answer = await httpsRequest(`${url}/realms/${realms.rs256}/protocol/openid-connect/token`, undefined, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
  const parsed = JSON.parse(answer.text) as { access_token?: string };
  if (answer.status !== 200 || !parsed.access_token) throw new Error(`the token request over TLS answered ${answer.status}: ${answer.text}`);
  return parsed.access_token;
}

/** Retrieves with `token` over TLS, the connections presenting the client's certificate when `material` is given. */
export function tlsRetrieveScenario(name: string, token: string, depositId: string, material: MtlsMaterial | undefined): Scenario {
  return {
    name,
    expect: [200],
    ...(material ? { tls: material.client } : {}),
    request: () => ({ method: 'GET', path: `/v1/term-deposits/${depositId}/retrieve`, headers: { authorization: `Bearer ${token}` } }),
  };
}
