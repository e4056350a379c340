/**
 * Onboarding a FAPI 2.0 client with the CLI (docs/auth.md, "Client metadata and the fapi2 profile";
 * issue 26): `coregate realms add --profile fapi2` and `coregate clients create --auth-method
 * private_key_jwt --jwks FILE --dpop`, the refusals that name the flag at fault, and a first
 * DPoP-bound token of the new client from a server on that store. The commands run in the test's
 * process (test/helpers/cli.ts).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { exportJWK } from 'jose';
import { runCli } from '../helpers/cli.js';
import { tempDirectory } from '../helpers/data-files.js';
import { clientAssertion, dpopProof, keyPair, type KeyPair } from '../helpers/fapi.js';
import { startTestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

/** The CLI's rules do not depend on the store: SQLite. */
const sqlite = storeTargets[0]!;

describe('coregate realms add --profile fapi2, clients create --auth-method private_key_jwt', { skip: sqlite.skip }, () => {
  const dir = tempDirectory('coregate-fapi-cli-');
  let db: string;
  let drop: () => Promise<void>;
  let key: KeyPair;
  const jwksFile = join(dir, 'partner-jwks.json');
  const cli = (args: string[]) => runCli([...args, '--db', db], { env: { PATH: process.env.PATH ?? '' } });

  before(async () => {
    ({ url: db, drop } = await sqlite.create());
    key = await keyPair('ES256', 'partner-key-1');
    writeFileSync(jwksFile, JSON.stringify({ keys: [key.publicJwk] }));
  });
  after(async () => drop());

  test('a fapi2 realm signs PS256 by default and refuses RS256, naming --alg', async () => {
    const refused = await cli(['realms', 'add', '--realm', 'partners-rs', '--profile', 'fapi2', '--alg', 'RS256']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /--alg: a fapi2 realm signs its tokens with PS256, ES256, EdDSA, not RS256/);
    const created = await cli(['realms', 'add', '--realm', 'partners', '--profile', 'fapi2', '--json']);
    assert.equal(created.code, 0, created.stderr);
    assert.deepEqual(JSON.parse(created.stdout), { name: 'partners', audience: 'coregate-api', accessTokenLifespanSeconds: 300, signatureAlgorithm: 'PS256', profile: 'fapi2', dpopNonce: false });
  });

  test('in a fapi2 realm a secret client is refused, naming --auth-method; a private key in --jwks is refused, naming the member', async () => {
    const secretClient = await cli(['clients', 'create', '--realm', 'partners', '--client-id', 'secret-app', '--scopes', 'termDeposit:retrieve']);
    assert.notEqual(secretClient.code, 0);
    assert.match(secretClient.stderr, /--auth-method: a client of a fapi2 realm authenticates with private_key_jwt or tls_client_auth/);
    const privateFile = join(dir, 'private-jwks.json');
    writeFileSync(privateFile, JSON.stringify({ keys: [await exportJWK(key.privateKey)] }));
    const leaked = await cli(['clients', 'create', '--realm', 'partners', '--client-id', 'leaky-app', '--scopes', 'termDeposit:retrieve', '--auth-method', 'private_key_jwt', '--jwks', privateFile, '--dpop']);
    assert.notEqual(leaked.code, 0);
    assert.match(leaked.stderr, /--jwks: jwks\.keys\[0\]\.d is part of a private key: register the public key only/);
    const missing = await cli(['clients', 'create', '--realm', 'partners', '--client-id', 'keyless-app', '--scopes', 'termDeposit:retrieve', '--auth-method', 'private_key_jwt']);
    assert.match(missing.stderr, /--jwks: private_key_jwt needs the client's public keys/);
    const notADn = await cli(['clients', 'create', '--realm', 'partners', '--client-id', 'tls-app', '--scopes', 'termDeposit:retrieve', '--auth-method', 'tls_client_auth', '--tls-subject-dn', 'partner-app', '--certificate-bound']);
    assert.match(notADn.stderr, /--tls-subject-dn: "partner-app" is not a DN/);
    const rotated = await cli(['keys', 'rotate', '--realm', 'partners', '--alg', 'RS256']);
    assert.notEqual(rotated.code, 0);
    assert.match(rotated.stderr, /--alg: a fapi2 realm signs its tokens with PS256, ES256, EdDSA, not RS256/);
  });

  test('PS256 in a realm without a profile: a secret client\'s token is signed PS256 and the business API takes it', async () => {
    assert.equal((await cli(['realms', 'add', '--realm', 'plain-ps', '--alg', 'PS256'])).code, 0);
    const created = await cli(['clients', 'create', '--realm', 'plain-ps', '--client-id', 'ps-app', '--scopes', 'termDeposit:retrieve', '--json']);
    assert.equal(created.code, 0, created.stderr);
    const { clientSecret } = JSON.parse(created.stdout) as { clientSecret: string };
    const server = await startTestServer({ db, data: null, deployment: 'embedded' });
    try {
      const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'ps-app', client_secret: clientSecret });
      const response = await fetch(server.tokenUrl('plain-ps'), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
      const body = (await response.json()) as { access_token: string; token_type: string };
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.token_type, 'Bearer');
      assert.equal((JSON.parse(Buffer.from(body.access_token.split('.')[0] ?? '', 'base64url').toString()) as { alg: string }).alg, 'PS256');
      const retrieved = await fetch(`${server.url}/v1/term-deposits/TD-NONE/retrieve`, { headers: { authorization: `Bearer ${body.access_token}` } });
      assert.equal(retrieved.status, 404, 'past the guards: the PS256 token verified');
    } finally {
      await server.close();
    }
  });

  test('the private_key_jwt client is created without a secret, listed with its method, has no secret to rotate, and obtains a DPoP-bound token', async () => {
    const created = await cli(['clients', 'create', '--realm', 'partners', '--client-id', 'partner-app', '--scopes', 'termDeposit:initiate', 'termDeposit:retrieve', '--auth-method', 'private_key_jwt', '--jwks', jwksFile, '--dpop']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout.trim(), 'Client partner-app created in realm partners (private_key_jwt, DPoP-bound tokens).');
    assert.doesNotMatch(created.stdout, /client_secret/);
    const listed = JSON.parse((await cli(['clients', 'list', '--realm', 'partners', '--json'])).stdout) as Array<Record<string, unknown>>;
    assert.deepEqual(
      listed.map((client) => [client.clientId, client.tokenEndpointAuthMethod, client.dpopBoundAccessTokens]),
      [['partner-app', 'private_key_jwt', true]],
    );
    const rotate = await cli(['clients', 'rotate-secret', '--realm', 'partners', '--client-id', 'partner-app']);
    assert.notEqual(rotate.code, 0);
    assert.match(rotate.stderr, /authenticates with private_key_jwt: it has no secret to rotate/);

    const server = await startTestServer({ db, data: null, deployment: 'embedded' });
    try {
      const issuer = server.realmUrl('partners');
      const tokenUrl = server.tokenUrl('partners');
      const dpopKey = await keyPair('ES256');
      const form = new URLSearchParams({
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await clientAssertion(issuer, key, { iss: 'partner-app', sub: 'partner-app' }),
      });
      const response = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpopProof(dpopKey, 'POST', tokenUrl) }, body: form });
      const body = (await response.json()) as Record<string, unknown>;
      assert.equal(response.status, 200, JSON.stringify(body));
      assert.equal(body.token_type, 'DPoP');
      const header = JSON.parse(Buffer.from(String(body.access_token).split('.')[0] ?? '', 'base64url').toString()) as { alg: string };
      assert.equal(header.alg, 'PS256', 'the realm signs PS256');
    } finally {
      await server.close();
    }
  });
});
