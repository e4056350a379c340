/**
 * FAPI 2.0 machine to machine (docs/auth.md, "FAPI 2.0: strong client authentication and
 * sender-constrained tokens") driven by openid-client v6, a client nobody here wrote:
 * `private_key_jwt` (PrivateKeyJwt), DPoP-bound tokens (getDPoPHandle), the client credentials
 * grant, protected resources (a deposit, its retrieve) and introspection, all bound to the DPoP
 * key; on both stores.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as client from 'openid-client';
import { decodeJwt, calculateJwkThumbprint } from 'jose';
import { describeEachStore } from '../helpers/suite.js';
import { depositBody } from '../helpers/bodies.js';
import { fapiClientId, fapiMaterial, fapiRealm, keyPair } from '../helpers/fapi.js';

/** The test server speaks plain HTTP on 127.0.0.1; production is HTTPS. */
const insecure = { execute: [client.allowInsecureRequests] };
const material = await fapiMaterial();

describeEachStore(
  'FAPI 2.0 with openid-client v6 (private_key_jwt, DPoP)',
  ({ server }) => {
    async function fapiConfiguration(): Promise<client.Configuration> {
      const auth = client.PrivateKeyJwt({ key: material.clientKey.privateKey, kid: material.clientKey.publicJwk.kid as string });
      return client.discovery(new URL(server().realmUrl(fapiRealm)), fapiClientId, undefined, auth, insecure);
    }

    test('token, deposit, retrieve and introspection, every one DPoP-bound to the session\'s key', async () => {
      const config = await fapiConfiguration();
      const metadata = config.serverMetadata();
      assert.deepEqual(metadata.token_endpoint_auth_methods_supported, ['private_key_jwt'], 'a fapi2 realm lists strong methods only');
      assert.deepEqual(metadata.token_endpoint_auth_signing_alg_values_supported, ['PS256', 'ES256', 'EdDSA']);

      const dpopKeys = await client.randomDPoPKeyPair('ES256');
      const dpop = client.getDPoPHandle(config, dpopKeys);
      const tokens = await client.clientCredentialsGrant(config, { scope: 'termDeposit:initiate termDeposit:retrieve' }, { DPoP: dpop });
      assert.equal(tokens.token_type, 'dpop');
      const claims = decodeJwt(tokens.access_token);
      const jkt = await calculateJwkThumbprint(await crypto.subtle.exportKey('jwk', dpopKeys.publicKey) as never, 'sha256');
      assert.deepEqual(claims.cnf, { jkt }, 'cnf.jkt is the DPoP key\'s thumbprint');
      assert.equal(claims.client_id, fapiClientId);

      const api = new URL(server().url);
      const initiated = await client.fetchProtectedResource(config, tokens.access_token, new URL('/v1/term-deposits/initiate', api), 'POST', JSON.stringify(depositBody()), new Headers({ 'content-type': 'application/json' }), { DPoP: dpop });
      assert.equal(initiated.status, 200, await initiated.clone().text());
      const { termDepositAccount } = (await initiated.json()) as { termDepositAccount: string };

      const retrieved = await client.fetchProtectedResource(config, tokens.access_token, new URL(`/v1/term-deposits/${termDepositAccount}/retrieve`, api), 'GET', undefined, undefined, { DPoP: dpop });
      assert.equal(retrieved.status, 200, await retrieved.clone().text());
      assert.equal(((await retrieved.json()) as { termDepositAccount: string }).termDepositAccount, termDepositAccount);

      const introspected = await client.tokenIntrospection(config, tokens.access_token);
      assert.equal(introspected.active, true);
      assert.equal(introspected.token_type, 'DPoP');
      assert.deepEqual(introspected.cnf, { jkt });
    });

    test('the same token with another key\'s proofs is refused (401, DPoP challenge)', async () => {
      const config = await fapiConfiguration();
      const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
      const tokens = await client.clientCredentialsGrant(config, undefined, { DPoP: dpop });
      const thief = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
      const refused = client.fetchProtectedResource(config, tokens.access_token, new URL('/v1/term-deposits/TD-NONE/retrieve', server().url), 'GET', undefined, undefined, { DPoP: thief });
      // openid-client reports a 401 carrying WWW-Authenticate as a challenge error.
      await assert.rejects(refused, (error: unknown) => {
        assert.ok(error instanceof client.WWWAuthenticateChallengeError, String(error));
        assert.equal(error.status, 401);
        assert.equal(error.cause[0]?.scheme, 'dpop');
        assert.equal(error.cause[0]?.parameters.error, 'invalid_dpop_proof');
        assert.equal(error.cause[0]?.parameters.algs, 'PS256 ES256 EdDSA');
        return true;
      });
    });

    test('a private_key_jwt client signing with a key it did not register is invalid_client', async () => {
      const stranger = await keyPair('ES256', material.clientKey.publicJwk.kid as string);
      const auth = client.PrivateKeyJwt({ key: stranger.privateKey, kid: stranger.publicJwk.kid as string });
      const config = await client.discovery(new URL(server().realmUrl(fapiRealm)), fapiClientId, undefined, auth, insecure);
      const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair('ES256'));
      await assert.rejects(client.clientCredentialsGrant(config, undefined, { DPoP: dpop }), (error: unknown) => {
        assert.ok(error instanceof client.ResponseBodyError, String(error));
        assert.equal(error.status, 401);
        assert.equal(error.error, 'invalid_client');
        return true;
      });
    });
  },
  { data: material.dataFile },
);
