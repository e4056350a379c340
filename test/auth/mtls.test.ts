/**
 * Mutual TLS (RFC 8705; docs/auth.md, "Mutual TLS"): `tls_client_auth` by the certificate's subject
 * DN and certificate-bound tokens (`cnf["x5t#S256"]`) checked on every business call; directly
 * (coregate serves TLS with --tls-client-ca) and behind a TLS-terminating proxy
 * (--client-certificate-header, believed from --trusted-proxy only). The CA and the certificates
 * are made here with openssl, per run: no private key lives in the repository.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, fetch } from 'undici';
import { readDemoData, tempDirectory, writeTempDataFile } from '../helpers/data-files.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { resolveConfig } from '../../src/config.js';

const dir = tempDirectory('coregate-mtls-');
const file = (name: string) => join(dir, name);
const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

function openssl(args: string[]): boolean {
  try {
    execFileSync('openssl', args, { stdio: 'ignore', cwd: dir });
    return true;
  } catch {
    return false;
  }
}

/** A CA, and a client certificate it issues with `subject`. */
function makeCa(name: string): boolean {
  return openssl(['req', '-x509', ...ecKey, '-subj', `/CN=${name}`, '-days', '1', '-keyout', `${name}.key`, '-out', `${name}.pem`]);
}

function makeClient(name: string, subject: string, ca: string): boolean {
  return openssl(['req', ...ecKey, '-subj', subject, '-keyout', `${name}.key`, '-out', `${name}.csr`]) && openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-CAcreateserial', '-days', '1', '-out', `${name}.pem`]);
}

const made =
  openssl(['req', '-x509', ...ecKey, '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1', '-days', '1', '-keyout', 'server.key', '-out', 'server.pem']) &&
  makeCa('partner-ca') &&
  makeCa('rogue-ca') &&
  makeClient('client', '/C=DE/O=Example Partner, Inc/CN=mtls-app', 'partner-ca') &&
  makeClient('other', '/C=DE/O=Example Partner, Inc/CN=other-app', 'partner-ca') &&
  makeClient('forged', '/C=DE/O=Example Partner, Inc/CN=mtls-app', 'rogue-ca');

/** As RFC 4514 writes it: the comma of the organization's name escaped, spaces after the separators allowed. */
const subjectDn = 'CN=mtls-app, O=Example Partner\\, Inc, C=DE';
const thumbprintOf = (name: string) => createHash('sha256').update(new X509Certificate(readFileSync(file(`${name}.pem`))).raw).digest('base64url');

function dataFile(): string {
  const data = readDemoData<{ realms: unknown[] }>();
  data.realms.push({
    name: 'mtls',
    profile: 'fapi2',
    audience: 'coregate-api',
    clients: [{ clientId: 'mtls-app', tokenEndpointAuthMethod: 'tls_client_auth', tlsClientAuthSubjectDn: subjectDn, tlsClientCertificateBoundAccessTokens: true, scopes: ['termDeposit:retrieve'] }],
  });
  return writeTempDataFile(data, 'coregate-mtls-data-');
}

interface Answer {
  status: number;
  body: Record<string, any>;
  challenge: string | null;
}

const sqlite = storeTargets[0]!;

describe('client certificate settings', () => {
  test('--client-certificate-header needs --trusted-proxy and --tls-client-ca, and is for a proxy: not beside --tls-cert', () => {
    const base = { tlsClientCa: 'ca.pem' };
    assert.throws(() => resolveConfig({ ...base, clientCertificateHeader: 'x-client-cert' }, {}), /--client-certificate-header needs --trusted-proxy/);
    assert.throws(() => resolveConfig({ clientCertificateHeader: 'x-client-cert', trustedProxy: ['127.0.0.1'] }, {}), /need --tls-client-ca/);
    assert.throws(() => resolveConfig({ ...base, tlsCert: 'c.pem', tlsKey: 'k.pem', clientCertificateHeader: 'x-client-cert', trustedProxy: ['127.0.0.1'] }, {}), /TLS-terminating proxy in front of coregate/);
    assert.throws(() => resolveConfig(base, {}), /--tls-client-ca needs --tls-cert and --tls-key/);
    assert.deepEqual(resolveConfig({ ...base, clientCertificateHeader: 'x-client-cert', trustedProxy: ['127.0.0.1'] }, {}).clientCertificates, { caFile: 'ca.pem', header: 'x-client-cert', trustedProxies: ['127.0.0.1'] });
  });
});

describe('mutual TLS', { skip: !made ? 'openssl is not available to make test certificates' : sqlite.skip }, () => {
  const agents = new Map<string, Agent>();
  /** An HTTPS client presenting `certificate` (or none), trusting the server's certificate. */
  const agent = (certificate: string | undefined) => {
    const key = certificate ?? '';
    if (!agents.has(key)) {
      const connect = { ca: readFileSync(file('server.pem')), ...(certificate ? { cert: readFileSync(file(`${certificate}.pem`)), key: readFileSync(file(`${certificate}.key`)) } : {}) };
      agents.set(key, new Agent({ connect }));
    }
    return agents.get(key)!;
  };
  after(async () => {
    for (const each of agents.values()) await each.close();
  });

  describe('served directly (--tls-client-ca)', () => {
    let server: TestServer;
    let drop: () => Promise<void>;
    before(async () => {
      const created = await sqlite.create();
      drop = created.drop;
      server = await startTestServer({ db: created.url, data: dataFile(), deployment: 'embedded', flags: { tlsCert: file('server.pem'), tlsKey: file('server.key'), tlsClientCa: file('partner-ca.pem'), authFailureLimit: '0' } });
    });
    after(async () => {
      await server?.close();
      await drop?.();
    });

    async function token(certificate: string | undefined, form: Record<string, string> = { client_id: 'mtls-app' }): Promise<Answer> {
      const response = await fetch(server.tokenUrl('mtls'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', ...form }).toString(), dispatcher: agent(certificate) });
      return { status: response.status, body: (await response.json()) as Record<string, any>, challenge: response.headers.get('www-authenticate') };
    }

    async function retrieve(accessToken: string, certificate: string | undefined): Promise<Answer> {
      const response = await fetch(`${server.url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${accessToken}` }, dispatcher: agent(certificate) });
      return { status: response.status, body: (await response.json()) as Record<string, any>, challenge: response.headers.get('www-authenticate') };
    }

    test('tls_client_auth by the certificate\'s subject DN issues a token bound to it (cnf x5t#S256); the business API serves it on a connection with that certificate only', async () => {
      const granted = await token('client');
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.token_type, 'Bearer');
      const claims = JSON.parse(Buffer.from(String(granted.body.access_token).split('.')[1] ?? '', 'base64url').toString()) as { cnf?: Record<string, string> };
      assert.deepEqual(claims.cnf, { 'x5t#S256': thumbprintOf('client') });
      assert.equal((await retrieve(granted.body.access_token, 'client')).status, 404, 'past the guards');
      for (const elsewhere of [undefined, 'other']) {
        const refused = await retrieve(granted.body.access_token, elsewhere);
        assert.equal(refused.status, 401, JSON.stringify(refused.body));
        assert.equal(refused.body.errordetail?.[0]?.reason, 'INVALID_TOKEN');
        assert.match(refused.challenge ?? '', /error="invalid_token"/);
      }
    });

    test('a certificate-bound client that sends a DPoP proof too gets a token bound to both; the API wants both', async () => {
      const { dpopProof, keyPair } = await import('../helpers/fapi.js');
      const key = await keyPair('ES256');
      const response = await fetch(server.tokenUrl('mtls'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpopProof(key, 'POST', server.tokenUrl('mtls')) }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'mtls-app' }).toString(), dispatcher: agent('client') });
      const body = (await response.json()) as Record<string, any>;
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.token_type, 'DPoP');
      const cnf = (JSON.parse(Buffer.from(String(body.access_token).split('.')[1] ?? '', 'base64url').toString()) as { cnf?: Record<string, string> }).cnf ?? {};
      assert.equal(cnf['x5t#S256'], thumbprintOf('client'));
      assert.ok(cnf.jkt);
      const url = `${server.url}/v1/term-deposits/TD-NONE/retrieve`;
      const call = async (certificate: string | undefined) =>
        (await fetch(url, { headers: { authorization: `DPoP ${body.access_token}`, dpop: await dpopProof(key, 'GET', url, { accessToken: body.access_token }) }, dispatcher: agent(certificate) })).status;
      assert.equal(await call('client'), 404);
      assert.equal(await call(undefined), 401, 'the proof alone is not enough');
    });

    test('a certificate with another subject, one another CA issued, or none at all is invalid_client', async () => {
      for (const certificate of ['other', 'forged', undefined]) {
        const refused = await token(certificate);
        assert.equal(refused.status, 401, `${certificate}: ${JSON.stringify(refused.body)}`);
        assert.equal(refused.body.error, 'invalid_client');
      }
    });

    test('discovery says certificate-bound tokens and the mTLS endpoint aliases; a secret client is still served over the same port', async () => {
      const metadata = (await (await fetch(`${server.realmUrl('mtls')}/.well-known/openid-configuration`, { dispatcher: agent(undefined) })).json()) as Record<string, any>;
      assert.equal(metadata.tls_client_certificate_bound_access_tokens, true);
      assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['private_key_jwt', 'tls_client_auth']);
      assert.equal(metadata.mtls_endpoint_aliases?.token_endpoint, server.tokenUrl('mtls'));
      const secretClient = await fetch(server.tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'treasury-app', client_secret: 'treasury-app-secret-change-me-0123456789abcdef' }).toString(), dispatcher: agent(undefined) });
      assert.equal(secretClient.status, 200);
    });
  });

  describe('behind a TLS-terminating proxy (--client-certificate-header, --trusted-proxy)', () => {
    const header = 'x-client-certificate';
    const pem = () => encodeURIComponent(readFileSync(file('client.pem'), 'utf8'));
    let trusting: TestServer;
    let distrusting: TestServer;
    const drops: Array<() => Promise<void>> = [];
    before(async () => {
      const start = async (trustedProxy: string) => {
        const created = await sqlite.create();
        drops.push(created.drop);
        return startTestServer({ db: created.url, data: dataFile(), deployment: 'embedded', flags: { tlsClientCa: file('partner-ca.pem'), clientCertificateHeader: header, trustedProxy: [trustedProxy], authFailureLimit: '0' } });
      };
      trusting = await start('127.0.0.1');
      distrusting = await start('10.9.8.7');
    });
    after(async () => {
      await trusting?.close();
      await distrusting?.close();
      for (const drop of drops) await drop();
    });

    const tokenVia = async (server: TestServer, certificate: string) =>
      fetch(server.tokenUrl('mtls'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', [header]: certificate }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'mtls-app' }).toString() });

    test('from a trusted proxy the header\'s certificate authenticates the client and binds its token; the API checks the header on each call', async () => {
      const response = await tokenVia(trusting, pem());
      const body = (await response.json()) as Record<string, any>;
      assert.equal(response.status, 200, JSON.stringify(body));
      const served = await fetch(`${trusting.url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${body.access_token}`, [header]: pem() } });
      assert.equal(served.status, 404);
      const without = await fetch(`${trusting.url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${body.access_token}` } });
      assert.equal(without.status, 401);
    });

    test('the header from an address that is not a trusted proxy, a certificate another CA issued, or two such headers authenticate nobody', async () => {
      assert.equal((await tokenVia(distrusting, pem())).status, 401);
      // A proxy that appends its header to the client's: two headers, or one with both values joined.
      const otherPem = encodeURIComponent(readFileSync(file('other.pem'), 'utf8'));
      const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'mtls-app' }).toString();
      const twice = await new Promise<number>((resolve, reject) => {
        const sent = httpRequest(trusting.tokenUrl('mtls'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        });
        sent.on('error', reject);
        // An array value: the header is sent twice, as two lines.
        sent.setHeader(header, [pem(), otherPem]);
        sent.end(body);
      });
      assert.equal(twice, 401, 'two headers');
      assert.equal((await tokenVia(trusting, `${pem()}, ${otherPem}`)).status, 401, 'two values in one header');
      assert.equal((await tokenVia(trusting, pem() + otherPem)).status, 401, 'two certificates in one value');
      // Another armour first: OpenSSL would read it, the certificate count would not see it.
      const armoured = readFileSync(file('forged.pem'), 'utf8').replaceAll('CERTIFICATE-----', 'X509 CERTIFICATE-----');
      assert.equal((await tokenVia(trusting, encodeURIComponent(`${armoured}${readFileSync(file('client.pem'), 'utf8')}`))).status, 401, 'an X509 CERTIFICATE block before the real one');
      assert.equal((await tokenVia(trusting, encodeURIComponent(readFileSync(file('forged.pem'), 'utf8')))).status, 401);
      assert.equal((await tokenVia(trusting, 'not-a-certificate')).status, 401);
    });
  });
});

describe('subject DNs (RFC 4514)', () => {
  test('Node\'s subject becomes RFC 4514 (most specific first, its escapes kept, a multi-valued RDN joined by +); DNs compare by meaning', async () => {
    const { rfc4514Subject } = await import('../../src/auth/client-certificate.js');
    const { sameDistinguishedName } = await import('../../src/auth/distinguished-name.js');
    assert.equal(rfc4514Subject('C=DE\nO=Bank\\, Inc\nCN=a + UID=b'), 'CN=a+UID=b,O=Bank\\, Inc,C=DE');
    assert.ok(sameDistinguishedName('UID=b+CN=a, o=bank\\, inc ,C=de', 'CN=a+UID=b,O=Bank\\, Inc,C=DE'));
    assert.ok(sameDistinguishedName('CN=a\\2Cb', 'CN=a\\,b'), 'hex escapes read');
    assert.ok(!sameDistinguishedName('CN=a,O=Bank,C=DE', 'CN=a,O=Bank'));
    assert.ok(!sameDistinguishedName('CN=a,O=Bank', 'O=Bank,CN=a'), 'the RDNs\' order matters');
    assert.ok(!sameDistinguishedName('not a dn', 'not a dn'));
    assert.ok(sameDistinguishedName('CN=\\C3\\A9t\\C3\\A9', 'CN=été'), 'hex escapes are UTF-8 bytes');
    assert.ok(!sameDistinguishedName('CN=foo\\ ', 'CN=foo'), 'an escaped trailing space is part of the value');
    assert.ok(!sameDistinguishedName('CN=foo\\ ', 'CN=foo\\\\'), '... and not a backslash');
  });
});
