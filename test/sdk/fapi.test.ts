/**
 * The SDK and the CLI as FAPI 2.0 clients (docs/auth.md, "The SDK and the CLI"): `private_key_jwt`
 * instead of a secret, DPoP-bound tokens with one key pair per session and a proof with every call,
 * the nonce retry of a realm that asks for nonces; the token cache and the sessions' isolation as
 * with secrets (docs/auth.md, "A client's secret and tokens"). Token requests are counted by the
 * SDK's own fetch.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeJwt, exportJWK } from 'jose';
import { CoregateAuthError, CoregateClient, type TermDepositInitiationRequest } from '../../src/sdk/index.js';
import { runCli } from '../helpers/cli.js';
import { depositBody } from '../helpers/bodies.js';
import { tempDirectory } from '../helpers/data-files.js';
import { fapiClientId, fapiMaterial, fapiRealm, nonceRealm } from '../helpers/fapi.js';
import { describeEachStore } from '../helpers/suite.js';

const material = await fapiMaterial();

describeEachStore(
  'SDK and CLI with private_key_jwt and DPoP',
  ({ server }) => {
    function fapiClient(realm = fapiRealm) {
      const tokenRequests: string[] = [];
      const client = new CoregateClient({
        baseUrl: server().url,
        realm,
        clientId: fapiClientId,
        privateKey: { key: material.clientKey.privateKey, kid: material.clientKey.publicJwk.kid as string, alg: 'ES256' },
        dpop: true,
        fetch: (input, init) => {
          const url = String(input instanceof Request ? input.url : input);
          if (url.endsWith('/protocol/openid-connect/token')) tokenRequests.push(new Headers(init?.headers).get('dpop') === null ? 'no proof' : 'proof');
          return fetch(input, init);
        },
      });
      return { client, tokenRequests };
    }

    test('a private-key client initiates and retrieves with DPoP-bound tokens; one token request per session, each session with its own key', async () => {
      const { client, tokenRequests } = fapiClient();
      const initiated = await client.termDeposits.initiate(depositBody() as unknown as TermDepositInitiationRequest);
      assert.equal(initiated.status, 200);
      const id = initiated.status === 200 ? initiated.result.termDepositAccount : '';
      const { result: retrieved } = await client.termDeposits.retrieve(id);
      assert.equal(retrieved.termDepositAccount, id);
      await client.termDeposits.retrieve(id);
      assert.deepEqual(tokenRequests, ['proof'], 'one token request, with a proof, for three calls');

      const reader = client.session({ scope: 'termDeposit:retrieve' });
      await reader.termDeposits.retrieve(id);
      assert.equal(tokenRequests.length, 2, 'another session, another token');
      const own = decodeJwt(await client.token()).cnf as { jkt: string };
      const other = decodeJwt(await client.token({ scope: 'termDeposit:retrieve' })).cnf as { jkt: string };
      assert.ok(own.jkt && other.jkt);
      assert.notEqual(own.jkt, other.jkt, 'each session binds its tokens to its own key pair');
    });

    test('against a realm that asks for nonces the SDK asks again once, with the nonce, and is served', async () => {
      const { client, tokenRequests } = fapiClient(nonceRealm);
      const token = await client.token();
      assert.equal(decodeJwt(token).client_id, fapiClientId);
      assert.deepEqual(tokenRequests, ['proof', 'proof'], 'use_dpop_nonce, then the proof with its nonce');
    });

    test('against a realm that demands nonces at the business API the SDK repeats a call once with the nonce, then sends it in every proof (docs/auth.md)', async () => {
      const apiAnswers: Array<{ path: string; status: number; challenge: string }> = [];
      const client = new CoregateClient({
        baseUrl: server().url,
        realm: nonceRealm,
        clientId: fapiClientId,
        privateKey: { key: material.clientKey.privateKey, kid: material.clientKey.publicJwk.kid as string },
        dpop: true,
        fetch: async (input, init) => {
          const response = await fetch(input, init);
          const url = new URL(String(input instanceof Request ? input.url : input));
          if (url.pathname.startsWith('/v1/')) apiAnswers.push({ path: url.pathname, status: response.status, challenge: response.headers.get('www-authenticate') ?? '' });
          return response;
        },
      });
      const initiated = await client.termDeposits.initiate(depositBody() as unknown as TermDepositInitiationRequest);
      assert.equal(initiated.status, 200);
      const id = initiated.status === 200 ? initiated.result.termDepositAccount : '';
      const { result } = await client.termDeposits.retrieve(id);
      assert.equal(result.termDepositAccount, id);
      assert.equal(apiAnswers[0]?.status, 401, 'the first call had no nonce');
      assert.match(apiAnswers[0]?.challenge ?? '', /^DPoP error="use_dpop_nonce"/);
      assert.deepEqual(apiAnswers.slice(1).map((answer) => answer.status), [200, 200], 'repeated once with the nonce; the next call carried it');
    });

    test('privateKey.key takes a PEM string or Buffer, a KeyObject, a CryptoKey or a private JWK; its algorithm follows from the key', async () => {
      const { createPrivateKey } = await import('node:crypto');
      const jwk = { ...(await exportJWK(material.clientKey.privateKey)) };
      const keyObject = createPrivateKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
      const pem = keyObject.export({ type: 'pkcs8', format: 'pem' }) as string;
      const forms: Array<[string, unknown]> = [['PEM string', pem], ['PEM Buffer', Buffer.from(pem)], ['KeyObject', keyObject], ['CryptoKey', material.clientKey.privateKey], ['JWK', jwk]];
      for (const [name, key] of forms) {
        const client = new CoregateClient({ baseUrl: server().url, realm: fapiRealm, clientId: fapiClientId, privateKey: { key: key as never, kid: material.clientKey.publicJwk.kid as string }, dpop: true });
        assert.equal(decodeJwt(await client.token()).client_id, fapiClientId, name);
      }
    });

    test('a private key the SDK cannot sign with is refused when the client is made, with a CoregateAuthError naming the accepted forms', async () => {
      const { generateKeyPairSync } = await import('node:crypto');
      const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const refusals: Array<[string, unknown, string | undefined, RegExp]> = [
        ['a string that is no PEM', 'not a key', undefined, /PEM private key \(string or Buffer\), a node:crypto KeyObject, a WebCrypto CryptoKey or a private JWK/],
        ['a public PEM', rsa.publicKey.export({ type: 'spki', format: 'pem' }), undefined, /no usable private key/],
        ['a public KeyObject', rsa.publicKey, undefined, /public KeyObject/],
        ['a public JWK', material.clientKey.publicJwk, undefined, /public JWK/],
        ['a number', 42, undefined, /must be a PEM private key/],
        ['an RSA key for ES256', rsa.privateKey, 'ES256', /cannot sign ES256/],
      ];
      for (const [name, key, alg, message] of refusals) {
        assert.throws(
          () => new CoregateClient({ baseUrl: server().url, realm: fapiRealm, clientId: fapiClientId, privateKey: { key: key as never, ...(alg === undefined ? {} : { alg: alg as 'ES256' }) } }),
          (error: unknown) => error instanceof CoregateAuthError && error.status === 0 && message.test(error.message),
          name,
        );
      }
    });

    test('coregate token and term-deposit retrieve with --private-key and --dpop; no secret asked for', async () => {
      const dir = tempDirectory('coregate-fapi-sdk-');
      const keyFile = join(dir, 'client-key.json');
      writeFileSync(keyFile, JSON.stringify({ ...(await exportJWK(material.clientKey.privateKey)), kid: material.clientKey.publicJwk.kid }));
      const env = { PATH: process.env.PATH ?? '', COREGATE_URL: server().url, COREGATE_REALM: fapiRealm, COREGATE_CLIENT_ID: fapiClientId };
      const token = await runCli(['token', '--private-key', keyFile, '--dpop', '--json'], { env, input: '' });
      assert.equal(token.code, 0, token.stderr);
      const issued = JSON.parse(token.stdout) as { access_token?: string; accessToken?: string };
      const accessToken = issued.access_token ?? issued.accessToken ?? '';
      assert.ok((decodeJwt(accessToken).cnf as { jkt?: string } | undefined)?.jkt, 'a DPoP-bound token');
      const missing = await runCli(['term-deposit', 'retrieve', 'TD-NONE', '--private-key', keyFile, '--dpop', '--json'], { env, input: '' });
      assert.equal(missing.code, 1, missing.stderr);
      assert.match(missing.stdout, /"status": 404/, 'past the guards: the deposit does not exist');
      const plain = await runCli(['term-deposit', 'retrieve', 'TD-NONE', '--private-key', keyFile, '--json'], { env, input: '' });
      assert.notEqual(plain.code, 0, 'without --dpop the fapi client gets no token (its realm requires DPoP)');
      assert.match(plain.stderr + plain.stdout, /invalid_dpop_proof/);
    });
  },
  { data: material.dataFile },
);
