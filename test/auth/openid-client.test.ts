/**
 * Interoperability with a third-party OAuth/OIDC client: openid-client v6 discovers the realm,
 * obtains tokens with the client credentials grant (client_secret_post and client_secret_basic)
 * and introspects them; the tokens verify with jose against the discovered jwks_uri.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as client from 'openid-client';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { demo } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';

const { treasury, branch, reporting } = demo;
/** The test server speaks plain HTTP on 127.0.0.1; production is HTTPS (TLS 1.2+: docs/deployment.md, "TLS"). */
const insecure = { execute: [client.allowInsecureRequests] };

describeEachStore('openid-client v6 interoperability', ({ server }) => {
  const issuerUrl = () => new URL(server().realmUrl());

  async function discover(
    who: { clientId: string; secret: string } = treasury,
    auth?: client.ClientAuth,
  ): Promise<client.Configuration> {
    return client.discovery(issuerUrl(), who.clientId, auth ? undefined : who.secret, auth, insecure);
  }

  test('discovery: issuer is the realm URL; token, JWKS and introspection endpoints; client_credentials only; both secret methods and private_key_jwt (docs/auth.md, "Discovery and introspection": its algorithms, DPoP\'s, no certificate-bound tokens without --tls-client-ca)', async () => {
    const config = await discover();
    const metadata = config.serverMetadata();
    const realmUrl = server().realmUrl();
    assert.equal(metadata.issuer, realmUrl);
    assert.equal(metadata.token_endpoint, `${realmUrl}/protocol/openid-connect/token`);
    assert.equal(metadata.jwks_uri, `${realmUrl}/protocol/openid-connect/certs`);
    assert.equal(metadata.introspection_endpoint, `${realmUrl}/protocol/openid-connect/token/introspect`);
    assert.deepEqual(metadata.grant_types_supported, ['client_credentials']);
    assert.deepEqual([...(metadata.token_endpoint_auth_methods_supported ?? [])].sort(), ['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
    assert.deepEqual([...(metadata.introspection_endpoint_auth_methods_supported ?? [])].sort(), ['client_secret_basic', 'client_secret_post', 'private_key_jwt']);
    assert.deepEqual(metadata.token_endpoint_auth_signing_alg_values_supported, ['PS256', 'ES256', 'EdDSA', 'RS256']);
    assert.deepEqual(metadata.dpop_signing_alg_values_supported, ['PS256', 'ES256', 'EdDSA']);
    assert.equal(metadata.tls_client_certificate_bound_access_tokens, false);
    assert.equal(metadata.mtls_endpoint_aliases, undefined);
  });

  test('the discovery document\'s issuer equals the tokens\' iss', async () => {
    const config = await discover();
    const tokens = await client.clientCredentialsGrant(config);
    assert.equal(decodeJwt(tokens.access_token).iss, config.serverMetadata().issuer);
  });

  test('the discovery document is served as JSON at {issuer}/.well-known/openid-configuration', async () => {
    const response = await fetch(`${server().realmUrl()}/.well-known/openid-configuration`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(((await response.json()) as { issuer: string }).issuer, server().realmUrl());
  });

  test('clientCredentialsGrant with client_secret_post (the default for a secret) obtains a Bearer token', async () => {
    const config = await discover(treasury);
    const tokens = await client.clientCredentialsGrant(config);
    assert.equal(tokens.token_type, 'bearer'); // openid-client normalizes the token type to lower case
    assert.equal(typeof tokens.access_token, 'string');
    assert.equal(tokens.expires_in, 300);
    const expiresIn = tokens.expiresIn();
    assert.ok(expiresIn !== undefined && expiresIn > 290 && expiresIn <= 300);
    assert.equal(tokens.scope, 'termDeposit:initiate termDeposit:retrieve merchandisingLoan:execute');
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(decodeJwt(tokens.access_token).client_id, treasury.clientId);
  });

  test('clientCredentialsGrant with ClientSecretBasic obtains a token', async () => {
    const config = await discover(branch, client.ClientSecretBasic(branch.secret));
    const tokens = await client.clientCredentialsGrant(config);
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.client_id, branch.clientId);
    assert.equal(claims.azp, branch.clientId);
  });

  test('clientCredentialsGrant with ClientSecretPost set explicitly obtains a token', async () => {
    const config = await discover(reporting, client.ClientSecretPost(reporting.secret));
    const tokens = await client.clientCredentialsGrant(config);
    assert.equal(decodeJwt(tokens.access_token).client_id, reporting.clientId);
  });

  test('the token verifies with jose against the discovered jwks_uri (explicit algorithms, issuer, audience)', async () => {
    const config = await discover();
    const tokens = await client.clientCredentialsGrant(config);
    const metadata = config.serverMetadata();
    const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri!));
    const { payload, protectedHeader } = await jwtVerify(tokens.access_token, jwks, {
      algorithms: ['RS256'],
      issuer: metadata.issuer,
      audience: 'coregate-api',
    });
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.client_id, treasury.clientId);
    assert.equal(payload.backbone_user, 'svc-treasury');
  });

  test('a Basic-authenticated token verifies against the discovered jwks_uri too', async () => {
    const config = await discover(branch, client.ClientSecretBasic(branch.secret));
    const tokens = await client.clientCredentialsGrant(config);
    const metadata = config.serverMetadata();
    const jwks = createRemoteJWKSet(new URL(metadata.jwks_uri!));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { algorithms: ['RS256'], issuer: metadata.issuer, audience: 'coregate-api' });
    assert.equal(payload.client_id, branch.clientId);
  });

  test('extra token parameters pass through: scope narrows the token, username and workstation become claims', async () => {
    const config = await discover();
    const tokens = await client.clientCredentialsGrant(config, { scope: 'termDeposit:retrieve', username: 'jdoe', workstation: 'WS-BRANCH-07' });
    assert.equal(tokens.scope, 'termDeposit:retrieve');
    const claims = decodeJwt(tokens.access_token);
    assert.equal(claims.scope, 'termDeposit:retrieve');
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-BRANCH-07');
  });

  test('a wrong secret (client_secret_post) surfaces in openid-client as a 401 invalid_client error', async () => {
    const config = await discover({ clientId: treasury.clientId, secret: 'wrong-secret' });
    await assert.rejects(client.clientCredentialsGrant(config), (error: unknown) => {
      assert.ok(error instanceof client.ResponseBodyError, String(error));
      assert.equal(error.status, 401);
      assert.equal(error.error, 'invalid_client');
      return true;
    });
  });

  test('a wrong secret (client_secret_basic) surfaces as a 401 with the challenge Basic realm="sandbox"', async () => {
    const config = await discover(treasury, client.ClientSecretBasic('wrong-secret'));
    await assert.rejects(client.clientCredentialsGrant(config), (error: unknown) => {
      // openid-client reports a 401 carrying WWW-Authenticate as a challenge error.
      assert.ok(error instanceof client.WWWAuthenticateChallengeError, String(error));
      assert.equal(error.status, 401);
      assert.equal(error.cause[0]?.scheme, 'basic');
      assert.equal(error.cause[0]?.parameters.realm, 'sandbox');
      return true;
    });
  });

  test('a scope outside the client\'s grant surfaces as invalid_scope', async () => {
    const config = await discover(reporting);
    await assert.rejects(client.clientCredentialsGrant(config, { scope: 'termDeposit:initiate' }), (error: unknown) => {
      assert.ok(error instanceof client.ResponseBodyError, String(error));
      assert.equal(error.status, 400);
      assert.equal(error.error, 'invalid_scope');
      return true;
    });
  });

  test('tokenIntrospection returns active: true with the token\'s claims', async () => {
    const config = await discover();
    const tokens = await client.clientCredentialsGrant(config);
    const introspection = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(introspection.active, true);
    assert.equal(introspection.client_id, treasury.clientId);
    assert.equal(introspection.scope, tokens.scope);
    assert.equal(introspection.iss, config.serverMetadata().issuer);
    assert.equal(introspection.token_type, 'Bearer');
    assert.equal(introspection.exp, decodeJwt(tokens.access_token).exp);
  });

  test('tokenIntrospection with ClientSecretBasic, of another client\'s token, returns active: true', async () => {
    const issuing = await discover(branch);
    const tokens = await client.clientCredentialsGrant(issuing);
    const introspecting = await discover(reporting, client.ClientSecretBasic(reporting.secret));
    const introspection = await client.tokenIntrospection(introspecting, tokens.access_token);
    assert.equal(introspection.active, true);
    assert.equal(introspection.client_id, branch.clientId);
  });

  test('tokenIntrospection of a garbage token returns active: false and nothing more', async () => {
    const config = await discover();
    const introspection = await client.tokenIntrospection(config, 'not-a-token');
    assert.deepEqual({ ...introspection }, { active: false });
  });

  test('discovery of an unknown realm fails', async () => {
    await assert.rejects(client.discovery(new URL(server().realmUrl('no-such-realm')), treasury.clientId, treasury.secret, undefined, insecure));
  });
});
