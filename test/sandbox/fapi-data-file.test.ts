/**
 * The data file's FAPI 2.0 fields (docs/auth.md, "Client metadata and the fapi2 profile"): a
 * client's one authentication method and its tokens' binding, a realm's `fapi2` profile. What
 * breaks a rule is refused when the file is read, with the field named; nothing is loaded.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DataFileError, parseSandboxData, realmSigningAlgorithm } from '../../src/sandbox/data-file.js';

const publicKey = { kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1' };

function fapiRealm(client: Record<string, unknown>, realm: Record<string, unknown> = {}): Record<string, unknown> {
  return { realms: [{ name: 'partners', profile: 'fapi2', ...realm, clients: [{ clientId: 'partner-app', scopes: ['termDeposit:retrieve'], ...client }] }] };
}

const strongClient = { tokenEndpointAuthMethod: 'private_key_jwt', jwks: { keys: [publicKey] }, dpopBoundAccessTokens: true };

function refusedField(data: Record<string, unknown>): string {
  try {
    parseSandboxData(data, 'partners.json');
  } catch (error) {
    assert.ok(error instanceof DataFileError, String(error));
    return error.field;
  }
  return assert.fail('the data file was accepted');
}

describe('in the data file', () => {
  test('a fapi2 realm with a private_key_jwt client is accepted, and signs PS256 unless it says otherwise', () => {
    const data = parseSandboxData(fapiRealm(strongClient));
    assert.equal(realmSigningAlgorithm(data.realms![0]!), 'PS256');
    assert.equal(realmSigningAlgorithm(parseSandboxData(fapiRealm(strongClient, { signatureAlgorithm: 'EdDSA' })).realms![0]!), 'EdDSA');
    assert.equal(realmSigningAlgorithm(parseSandboxData({ realms: [{ name: 'plain' }] }).realms![0]!), 'RS256', 'a realm without a profile keeps RS256');
  });

  test('a fapi2 realm signing RS256 is refused at realms[0].signatureAlgorithm', () => {
    assert.equal(refusedField(fapiRealm(strongClient, { signatureAlgorithm: 'RS256' })), 'realms[0].signatureAlgorithm');
  });

  test('a secret client in a fapi2 realm is refused at its tokenEndpointAuthMethod', () => {
    assert.equal(refusedField(fapiRealm({ secret: 'a-secret-of-sixteen-chars-or-more' })), 'realms[0].clients[0].tokenEndpointAuthMethod');
  });

  test('private_key_jwt without keys, with a private key, or with a secret is refused at the field', () => {
    assert.equal(refusedField(fapiRealm({ tokenEndpointAuthMethod: 'private_key_jwt' })), 'realms[0].clients[0].jwks');
    assert.equal(refusedField(fapiRealm({ ...strongClient, jwks: { keys: [{ ...publicKey, d: 'private-part' }] } })), 'realms[0].clients[0].jwks.keys[0].d');
    assert.equal(refusedField(fapiRealm({ ...strongClient, jwks: { keys: [{ kty: 'oct', k: 'c2VjcmV0' }] } })), 'realms[0].clients[0].jwks.keys[0].kty');
    assert.equal(refusedField(fapiRealm({ ...strongClient, secret: 'a-secret-of-sixteen-chars-or-more' })), 'realms[0].clients[0].secret');
  });

  test('tls_client_auth needs its subject DN; a secret client needs its secret and has no keys', () => {
    assert.equal(refusedField(fapiRealm({ tokenEndpointAuthMethod: 'tls_client_auth', tlsClientCertificateBoundAccessTokens: true })), 'realms[0].clients[0].tlsClientAuthSubjectDn');
    const plain = (client: Record<string, unknown>) => ({ realms: [{ name: 'plain', clients: [{ clientId: 'app', scopes: [], ...client }] }] });
    assert.equal(refusedField(plain({})), 'realms[0].clients[0].secret');
    assert.equal(refusedField(plain({ secret: 'a-secret-of-sixteen-chars-or-more', jwks: { keys: [publicKey] } })), 'realms[0].clients[0].jwks');
    assert.equal(refusedField(plain({ tokenEndpointAuthMethod: 'client_secret_jwt', secret: 'a-secret-of-sixteen-chars-or-more' })), 'realms[0].clients[0].tokenEndpointAuthMethod');
  });

  test('a fapi2 realm\'s tls_client_auth client with certificate-bound tokens is accepted', () => {
    const data = parseSandboxData(fapiRealm({ tokenEndpointAuthMethod: 'tls_client_auth', tlsClientAuthSubjectDn: 'CN=partner-app,O=Partner,C=DE', tlsClientCertificateBoundAccessTokens: true }));
    assert.equal(data.realms?.[0]?.clients?.[0]?.tlsClientAuthSubjectDn, 'CN=partner-app,O=Partner,C=DE');
  });
});
