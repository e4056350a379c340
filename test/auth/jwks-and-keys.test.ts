/**
 * Signing keys and the JWKS (docs/auth.md, "Keys"): tokens verify with a third-party JOSE library
 * against the served JWKS; per-realm algorithms (RS256, ES256, EdDSA); rotation without downtime
 * (old keys stay published until their tokens expire); keys persist in the store and are shared by
 * instances; private keys are encrypted at rest when COREGATE_MASTER_KEY is set.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import pg from 'pg';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';
import { rotateSigningKey } from '../../src/auth/keyring.js';
import { Vault } from '../../src/auth/vault.js';
import { openStore } from '../../src/store/connect.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { writeTempDataFile } from '../helpers/data-files.js';
import { demo, demoDataFile, demoToken, postForm, startTestServer, type TestServer } from '../helpers/server.js';
import { spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { closeProbeStores, postgresAdminUrl, withStore } from '../helpers/stores.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { describeEachStore, describeEachStoreUrl } from '../helpers/suite.js';

const audience = 'coregate-api';
/** Members that only a private (or symmetric) JWK carries. */
const privateMembers = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];

// ---------------------------------------------------------------------------------------------
// Helpers of this file
// ---------------------------------------------------------------------------------------------

/** Runs the coregate CLI as a separate process (it works on the store directly). */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env: { ...process.env, ...env }, timeoutMs: 0 });
}

function certsUrl(server: TestServer, realm: string = demo.realm): string {
  return `${server.realmUrl(realm)}/protocol/openid-connect/certs`;
}

async function fetchJwks(server: TestServer, realm: string = demo.realm): Promise<JWK[]> {
  const response = await fetch(certsUrl(server, realm));
  assert.equal(response.status, 200);
  return ((await response.json()) as { keys: JWK[] }).keys;
}

/** Verifies like a resource server would: a fresh remote JWKS, explicit algorithms, issuer and audience. */
async function verifyAgainst(server: TestServer, token: string, realm: string = demo.realm, algorithms = ['RS256']) {
  const jwks = createRemoteJWKSet(new URL(certsUrl(server, realm)));
  return jwtVerify(token, jwks, { algorithms, issuer: server.realmUrl(realm), audience });
}

/**
 * A token of the demo client signed with `kid`: the token endpoint signs with the realm as its
 * auth snapshot holds it (at most authSnapshotMaxAgeMs old), so a rotation made through another
 * store handle or process is used within that bound, not necessarily by the very next token.
 */
/**
 * A token of `server` once its auth snapshot has aged authSnapshotMaxAgeMs on `clock`, the server's
 * fake clock (started at the real time, as the rotations stamp their keys with it): a rotation must
 * show by then (docs/deployment.md, "What an instance keeps in memory"), so the first token proves
 * it, without a real wait for the snapshot to age.
 */
async function tokenSignedWith(server: TestServer, kid: string, clock: FakeClock): Promise<string> {
  clock.advance(authSnapshotMaxAgeMs);
  const token = await demoToken(server);
  assert.equal(kidOf(token), kid, `the server still signs with ${kidOf(token)}, not ${kid}, ${authSnapshotMaxAgeMs} ms after the rotation`);
  return token;
}

async function introspect(server: TestServer, token: string, realm: string = demo.realm, client: { clientId: string; secret: string } = demo.reporting) {
  return postForm(`${server.realmUrl(realm)}/protocol/openid-connect/token/introspect`, {
    token,
    client_id: client.clientId,
    client_secret: client.secret,
  });
}

function kidOf(token: string): string {
  const { kid } = decodeProtectedHeader(token);
  assert.equal(typeof kid, 'string');
  return kid as string;
}

interface KeyRow {
  kid: string;
  realm: string;
  alg: string;
  public_jwk: string;
  private_jwk: string;
  retired_at: number | null;
}

/** Reads the signing_keys table through the project's own store layer. */
async function signingKeyRows(dbUrl: string, realm?: string): Promise<KeyRow[]> {
  return withStore(dbUrl, async (store) => {
    let query = store.db.selectFrom('signing_keys').select(['kid', 'realm', 'alg', 'public_jwk', 'private_jwk', 'retired_at']);
    if (realm !== undefined) query = query.where('realm', '=', realm);
    const rows = await query.orderBy('created_at').execute();
    return rows.map((row) => ({ ...row, retired_at: row.retired_at === null ? null : Number(row.retired_at) }));
  });
}

async function settingValue(dbUrl: string, name: string): Promise<string | undefined> {
  return withStore(dbUrl, async (store) => {
    const row = await store.db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
    return row?.value;
  });
}

function newMasterKey(): string {
  const key = randomBytes(32).toString('base64');
  assert.equal(key.length, 44);
  return key;
}

// ---------------------------------------------------------------------------------------------
// The served JWKS, verified by jose
// ---------------------------------------------------------------------------------------------

describeEachStore('JWKS: tokens verify with a third-party JOSE library', ({ server, dbUrl }) => {
  test('a token from the token endpoint verifies with jose against the served JWKS (explicit algorithms, issuer, audience)', async () => {
    const token = await demoToken(server(), demo.branch);
    const { payload, protectedHeader } = await verifyAgainst(server(), token);
    assert.equal(protectedHeader.alg, 'RS256');
    assert.equal(payload.iss, `${server().coregate.publicUrl}/realms/sandbox`);
    assert.equal(payload.aud, audience);
    assert.equal(payload.client_id, demo.branch.clientId);
  });

  test('the token\'s kid names a key of the JWKS', async () => {
    const token = await demoToken(server());
    const keys = await fetchJwks(server());
    assert.ok(keys.some((key) => key.kid === kidOf(token)));
  });

  test('the JWKS holds public keys only, each with kid, alg and use "sig"', async () => {
    const keys = await fetchJwks(server());
    assert.ok(keys.length >= 1);
    for (const key of keys) {
      for (const member of privateMembers) assert.equal(member in key, false, `JWKS key ${key.kid} has private member ${member}`);
      assert.equal(typeof key.kid, 'string');
      assert.ok((key.kid ?? '').length > 0);
      assert.equal(key.alg, 'RS256');
      assert.equal(key.use, 'sig');
      assert.equal(key.kty, 'RSA');
      assert.equal(typeof key.n, 'string');
      assert.equal(typeof key.e, 'string');
    }
  });

  test('kids are unique within the JWKS', async () => {
    const keys = await fetchJwks(server());
    assert.equal(new Set(keys.map((key) => key.kid)).size, keys.length);
  });

  test('a token verified against the JWKS with another audience or issuer is refused (the claims are really bound)', async () => {
    const token = await demoToken(server());
    const jwks = createRemoteJWKSet(new URL(certsUrl(server())));
    await assert.rejects(jwtVerify(token, jwks, { algorithms: ['RS256'], issuer: server().realmUrl(), audience: 'another-api' }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
    await assert.rejects(jwtVerify(token, jwks, { algorithms: ['RS256'], issuer: 'https://idp.example/realms/sandbox', audience }), {
      code: 'ERR_JWT_CLAIM_VALIDATION_FAILED',
    });
  });

  test('without a master key the stored private_jwk is plain JSON of a private JWK matching the published key', async () => {
    const rows = await signingKeyRows(dbUrl(), demo.realm);
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.private_jwk.startsWith('enc:'), false);
    const privateJwk = JSON.parse(row.private_jwk) as JWK;
    assert.equal(privateJwk.kty, 'RSA');
    assert.equal(typeof privateJwk.d, 'string');
    const publicJwk = JSON.parse(row.public_jwk) as JWK;
    assert.equal(privateJwk.n, publicJwk.n);
    assert.equal(publicJwk.kid, row.kid);
  });
});

// ---------------------------------------------------------------------------------------------
// Per-realm algorithms
// ---------------------------------------------------------------------------------------------

const algorithmRealms = [
  { name: 'alg-rs256', alg: 'RS256', kty: 'RSA', crv: undefined },
  { name: 'alg-es256', alg: 'ES256', kty: 'EC', crv: 'P-256' },
  { name: 'alg-eddsa', alg: 'EdDSA', kty: 'OKP', crv: 'Ed25519' },
] as const;

const algorithmClient = (realm: string) => ({ clientId: `${realm}-client`, secret: `${realm}-secret-0123456789abcdef0123456789` });

const algorithmsDataFile = writeTempDataFile({
  realms: algorithmRealms.map((realm) => ({
    name: realm.name,
    audience,
    signatureAlgorithm: realm.alg,
    clients: [
      {
        clientId: algorithmClient(realm.name).clientId,
        secret: algorithmClient(realm.name).secret,
        scopes: ['termDeposit:retrieve'],
      },
    ],
  })),
});

describeEachStore(
  'per-realm signing algorithms (RS256, ES256, EdDSA)',
  ({ server }) => {
    async function realmToken(realm: string): Promise<string> {
      const client = algorithmClient(realm);
      const response = await postForm(server().tokenUrl(realm), {
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.secret,
      });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body.access_token as string;
    }

    for (const realm of algorithmRealms) {
      test(`realm with signatureAlgorithm ${realm.alg}: the token header alg is ${realm.alg} and it verifies against the realm's JWKS`, async () => {
        const token = await realmToken(realm.name);
        const header = decodeProtectedHeader(token);
        assert.equal(header.alg, realm.alg);
        assert.equal(header.typ, 'JWT');
        const { payload } = await verifyAgainst(server(), token, realm.name, [realm.alg]);
        assert.equal(payload.iss, server().realmUrl(realm.name));
        assert.equal(payload.client_id, algorithmClient(realm.name).clientId);
      });

      test(`realm with signatureAlgorithm ${realm.alg}: its JWKS publishes a ${realm.kty}${realm.crv ? ` ${realm.crv}` : ''} public key with alg ${realm.alg}`, async () => {
        const keys = await fetchJwks(server(), realm.name);
        assert.equal(keys.length, 1);
        const key = keys[0]!;
        assert.equal(key.alg, realm.alg);
        assert.equal(key.kty, realm.kty);
        assert.equal(key.crv, realm.crv);
        assert.equal(key.use, 'sig');
        assert.equal(typeof key.kid, 'string');
        for (const member of privateMembers) assert.equal(member in key, false, `private member ${member} published`);
      });

      test(`realm with signatureAlgorithm ${realm.alg}: the token is refused when verification allows only another algorithm`, async () => {
        const token = await realmToken(realm.name);
        const others = ['RS256', 'ES256', 'EdDSA'].filter((alg) => alg !== realm.alg);
        await assert.rejects(verifyAgainst(server(), token, realm.name, others));
      });
    }

    test('a realm\'s token does not verify against another realm\'s JWKS', async () => {
      const token = await realmToken('alg-es256');
      const otherJwks = createRemoteJWKSet(new URL(certsUrl(server(), 'alg-rs256')));
      await assert.rejects(
        jwtVerify(token, otherJwks, { algorithms: ['RS256', 'ES256', 'EdDSA'], audience }),
        (error: { code?: string }) => error.code === 'ERR_JWKS_NO_MATCHING_KEY',
      );
    });

    test('each realm has its own key: the three kids differ', async () => {
      const kids = await Promise.all(algorithmRealms.map(async (realm) => kidOf(await realmToken(realm.name))));
      assert.equal(new Set(kids).size, 3);
    });
  },
  { data: algorithmsDataFile },
);

// ---------------------------------------------------------------------------------------------
// Rotation
// ---------------------------------------------------------------------------------------------

const rotationClock = new FakeClock(Date.now());
describeEachStore('signing key rotation', ({ server, dbUrl }) => {
  async function rotateInProcess(alg?: 'RS256' | 'ES256' | 'EdDSA'): Promise<string> {
    const store = await openStore(dbUrl());
    try {
      return await rotateSigningKey(store, new Vault(undefined), demo.realm, Date.now(), alg);
    } finally {
      await store.close();
    }
  }

  test('rotateSigningKey: new tokens carry the new kid and the JWKS publishes both the old and the new key', async () => {
    const before = await demoToken(server());
    const oldKid = kidOf(before);
    const newKid = await rotateInProcess();
    assert.notEqual(newKid, oldKid);
    const afterRotation = await tokenSignedWith(server(), newKid, rotationClock);
    const kids = (await fetchJwks(server())).map((key) => key.kid);
    assert.ok(kids.includes(oldKid), 'old key still published');
    assert.ok(kids.includes(newKid), 'new key published');
    await verifyAgainst(server(), afterRotation);
  });

  test('a token signed before rotation still verifies against the JWKS and introspects active', async () => {
    const before = await demoToken(server(), demo.branch);
    const newKid = await rotateInProcess();
    assert.notEqual(kidOf(await tokenSignedWith(server(), newKid, rotationClock)), kidOf(before));
    const { payload } = await verifyAgainst(server(), before);
    assert.equal(payload.client_id, demo.branch.clientId);
    const introspection = await introspect(server(), before);
    assert.equal(introspection.status, 200);
    assert.equal(introspection.body.active, true);
    assert.equal(introspection.body.client_id, demo.branch.clientId);
  });

  test('the store keeps exactly one active key per realm after rotations; retired keys have retired_at set', async () => {
    await rotateInProcess();
    const rows = await signingKeyRows(dbUrl(), demo.realm);
    assert.ok(rows.length >= 2);
    const active = rows.filter((row) => row.retired_at === null);
    assert.equal(active.length, 1);
    assert.equal(kidOf(await tokenSignedWith(server(), active[0]!.kid, rotationClock)), active[0]!.kid);
    for (const row of rows.filter((r) => r.retired_at !== null)) {
      assert.ok(Math.abs(row.retired_at! - Date.now() / 1000) < 60, 'retired just now');
    }
  });

  test('keys rotate (CLI) on the running server\'s store: the server signs with the printed kid within the auth snapshot\'s second', async () => {
    const oldKid = kidOf(await demoToken(server()));
    const result = await cli(['keys', 'rotate', '--realm', demo.realm, '--db', dbUrl(), '--json']);
    assert.equal(result.code, 0, result.stderr);
    const printed = JSON.parse(result.stdout) as { realm: string; kid: string };
    assert.equal(printed.realm, demo.realm);
    assert.notEqual(printed.kid, oldKid);
    // The JWKS publishes the new key at once (it reads the realm afresh), before any token uses it.
    assert.ok((await fetchJwks(server())).some((key) => key.kid === printed.kid));
    const token = await tokenSignedWith(server(), printed.kid, rotationClock);
    const kids = (await fetchJwks(server())).map((key) => key.kid);
    assert.ok(kids.includes(oldKid));
    assert.ok(kids.includes(printed.kid));
    await verifyAgainst(server(), token);
  });

  test('keys rotate --alg ES256 switches the realm\'s algorithm: ES256 tokens verify and the RS256 key stays published', async () => {
    const rsaToken = await demoToken(server());
    assert.equal(decodeProtectedHeader(rsaToken).alg, 'RS256');
    const result = await cli(['keys', 'rotate', '--realm', demo.realm, '--alg', 'ES256', '--db', dbUrl(), '--json']);
    assert.equal(result.code, 0, result.stderr);
    const { kid } = JSON.parse(result.stdout) as { kid: string };
    const ecToken = await tokenSignedWith(server(), kid, rotationClock);
    assert.deepEqual(
      { alg: decodeProtectedHeader(ecToken).alg, kid: decodeProtectedHeader(ecToken).kid },
      { alg: 'ES256', kid },
    );
    const keys = await fetchJwks(server());
    const newKey = keys.find((key) => key.kid === kid);
    assert.equal(newKey?.alg, 'ES256');
    assert.equal(newKey?.kty, 'EC');
    assert.ok(keys.some((key) => key.kid === kidOf(rsaToken) && key.alg === 'RS256'));
    await verifyAgainst(server(), ecToken, demo.realm, ['ES256']);
    await verifyAgainst(server(), rsaToken, demo.realm, ['RS256']);
    assert.equal((await introspect(server(), rsaToken)).body.active, true);
    assert.equal((await introspect(server(), ecToken)).body.active, true);
  });

  test('a later rotation without an algorithm keeps the realm\'s new algorithm (ES256)', async () => {
    const kid = await rotateInProcess();
    const token = await tokenSignedWith(server(), kid, rotationClock);
    assert.equal(decodeProtectedHeader(token).alg, 'ES256');
    assert.equal((await fetchJwks(server())).find((key) => key.kid === kid)?.alg, 'ES256');
  });

  test('keys rotate --alg with an unsupported algorithm (HS256) is refused and changes nothing', async () => {
    const kidBefore = kidOf(await demoToken(server()));
    const rowsBefore = (await signingKeyRows(dbUrl(), demo.realm)).length;
    const result = await cli(['keys', 'rotate', '--realm', demo.realm, '--alg', 'HS256', '--db', dbUrl()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /HS256|--alg/);
    assert.equal(kidOf(await demoToken(server())), kidBefore);
    assert.equal((await signingKeyRows(dbUrl(), demo.realm)).length, rowsBefore);
  });

  test('a retired key leaves the JWKS once its tokens have expired (lifespan + margin) and its tokens introspect inactive', async () => {
    const oldToken = await demoToken(server());
    const oldKid = kidOf(oldToken);
    await rotateInProcess();
    assert.ok((await fetchJwks(server())).some((key) => key.kid === oldKid));
    // Move the retirement far into the past (more than lifespan 300 s + any margin) and bump the
    // realm's key generation so that the server reloads its keys, as a rotation would.
    const store = await openStore(dbUrl());
    try {
      const longAgo = Math.floor(Date.now() / 1000) - 3_600;
      await store.db.updateTable('signing_keys').set({ retired_at: longAgo }).where('kid', '=', oldKid).execute();
      await store.db
        .updateTable('realms')
        .set((eb) => ({ key_generation: eb('key_generation', '+', 1) }))
        .where('name', '=', demo.realm)
        .execute();
    } finally {
      await store.close();
    }
    const kids = (await fetchJwks(server())).map((key) => key.kid);
    assert.equal(kids.includes(oldKid), false);
    assert.ok(kids.length >= 1);
    assert.deepEqual((await introspect(server(), oldToken)).body, { active: false });
  });
}, { clock: rotationClock });

// ---------------------------------------------------------------------------------------------
// Persistence and several instances
// ---------------------------------------------------------------------------------------------

/** `coregate serve` as its own process, without a master key, ready once its banner is out. */
function spawnServe(dbUrl: string): Promise<CoregateProcess> {
  return spawnCoregate(['serve', '--db', dbUrl, '--data', demoDataFile, '--log-level', 'warn'], { env: { COREGATE_MASTER_KEY: '' }, readyLog: 'coregate is ready on' });
}

describeEachStoreUrl('signing keys persist in the store and are shared by instances', ({ dbUrl }) => {
  const servers: TestServer[] = [];
  /** The servers' one clock: a test ages their auth snapshots together (tokenSignedWith). */
  const sharedClock = new FakeClock(Date.now());
  const start = async (options: { env?: Record<string, string> } = {}) => {
    const server = await startTestServer({ db: dbUrl(), clock: sharedClock, ...options });
    servers.push(server);
    return server;
  };
  after(async () => {
    for (const server of servers) await server.close();
  });

  test('a restarted server signs with the same kid, generates no new key, and verifies the first instance\'s tokens', async () => {
    const first = await start();
    const token = await demoToken(first, demo.branch);
    const kid = kidOf(token);
    await first.close();

    const second = await start();
    assert.equal(kidOf(await demoToken(second)), kid);
    assert.deepEqual(
      (await signingKeyRows(dbUrl(), demo.realm)).map((row) => row.kid),
      [kid],
    );
    // The token's issuer is the first instance's URL (another port), so verify the signature
    // against the second instance's JWKS with the first's issuer.
    const jwks = createRemoteJWKSet(new URL(certsUrl(second)));
    const { payload } = await jwtVerify(token, jwks, { algorithms: ['RS256'], issuer: first.realmUrl(), audience });
    assert.equal(payload.client_id, demo.branch.clientId);
    await second.close();
  });

  test('two servers on one store serve the same JWKS and sign with the same kid', async () => {
    const a = await start();
    const b = await start();
    const [jwksA, jwksB] = await Promise.all([fetchJwks(a), fetchJwks(b)]);
    assert.deepEqual(jwksB, jwksA);
    assert.equal(kidOf(await demoToken(a)), kidOf(await demoToken(b)));
  });

  test('a rotation through the shared store is seen by both running servers: same new kid, same JWKS', async () => {
    const [a, b] = servers.slice(-2) as [TestServer, TestServer];
    const store = await openStore(dbUrl());
    const kid = await rotateSigningKey(store, new Vault(undefined), demo.realm, Date.now()).finally(() => store.close());
    await tokenSignedWith(a, kid, sharedClock);
    await tokenSignedWith(b, kid, sharedClock);
    const [jwksA, jwksB] = await Promise.all([fetchJwks(a), fetchJwks(b)]);
    assert.deepEqual(jwksB, jwksA);
    assert.equal(jwksA.length, 2);
  });
});

describeEachStoreUrl('two instances sharing a public URL', ({ dbUrl }) => {
  const servers: TestServer[] = [];
  after(async () => {
    for (const server of servers) await server.close();
  });

  test('with one public URL, a token from one instance introspects active at the other', async () => {
    const publicUrl = 'https://auth.bank.example';
    servers.push(await startTestServer({ db: dbUrl(), publicUrl }));
    servers.push(await startTestServer({ db: dbUrl(), publicUrl }));
    const [a, b] = servers as [TestServer, TestServer];
    const token = await demoToken(a, demo.branch);
    assert.equal(decodeJwt(token).iss, `${publicUrl}/realms/sandbox`);
    const introspection = await introspect(b, token);
    assert.equal(introspection.body.active, true);
    assert.equal(introspection.body.client_id, demo.branch.clientId);
  });
});

describeEachStoreUrl('two instances started at once on an empty store', ({ dbUrl }) => {
  const processes: CoregateProcess[] = [];
  after(async () => {
    for (const serve of processes) await serve.stop();
  });

  test('two `coregate serve` processes started together create one key per realm and serve the same JWKS', async () => {
    const started = await Promise.allSettled([spawnServe(dbUrl()), spawnServe(dbUrl())]);
    for (const result of started) if (result.status === 'fulfilled') processes.push(result.value);
    for (const result of started) if (result.status === 'rejected') throw result.reason;
    const [a, b] = started.map((result) => (result as PromiseFulfilledResult<{ url: string }>).value);
    const rows = await signingKeyRows(dbUrl(), demo.realm);
    assert.equal(rows.length, 1, `keys: ${rows.map((row) => row.kid).join(', ')}`);
    const jwksOf = async (url: string) => ((await (await fetch(`${url}/realms/sandbox/protocol/openid-connect/certs`)).json()) as { keys: JWK[] }).keys;
    const [jwksA, jwksB] = await Promise.all([jwksOf(a!.url), jwksOf(b!.url)]);
    assert.deepEqual(jwksA, jwksB);
    assert.deepEqual(jwksA.map((key) => key.kid), [rows[0]!.kid]);
  });
}, { empty: true });

// ---------------------------------------------------------------------------------------------
// Encryption at rest
// ---------------------------------------------------------------------------------------------

describeEachStoreUrl('signing keys encrypted at rest with COREGATE_MASTER_KEY', ({ dbUrl, target }) => {
  const masterKey = newMasterKey();
  let firstKid: string | undefined;

  test('with a master key every private_jwk starts with enc:v1: and holds no plaintext JWK', async () => {
    const server = await startTestServer({ db: dbUrl(), env: { COREGATE_MASTER_KEY: masterKey } });
    try {
      firstKid = kidOf(await demoToken(server));
    } finally {
      await server.close();
    }
    const rows = await signingKeyRows(dbUrl());
    assert.ok(rows.length >= 1);
    for (const row of rows) {
      assert.ok(row.private_jwk.startsWith('enc:v1:'), `private_jwk of ${row.kid} is not sealed`);
      for (const plaintext of ['"kty"', '"d"', '"RSA"', row.kid, '{']) {
        assert.equal(row.private_jwk.includes(plaintext), false, `sealed value contains ${plaintext}`);
      }
      // The public half stays readable: it is what the JWKS serves.
      assert.equal((JSON.parse(row.public_jwk) as JWK).kid, row.kid);
    }
  });

  test('with a master key the client-secret hash key is sealed too', async () => {
    const value = await settingValue(dbUrl(), 'client_secret_hash_key');
    assert.ok(value?.startsWith('enc:v1:'), `client_secret_hash_key is ${value?.slice(0, 12)}...`);
  });

  test('restarting with the same master key works: the same kid signs and tokens verify', async () => {
    const server = await startTestServer({ db: dbUrl(), env: { COREGATE_MASTER_KEY: masterKey } });
    try {
      const token = await demoToken(server);
      assert.equal(kidOf(token), firstKid);
      await verifyAgainst(server, token);
    } finally {
      await server.close();
    }
  });

  test('restarting without the master key fails with an error naming COREGATE_MASTER_KEY', async () => {
    await assert.rejects(startTestServer({ db: dbUrl() }), (error: Error) => {
      assert.match(error.message, /COREGATE_MASTER_KEY/);
      return true;
    });
  });

  test('issue 12 item 5: read-only operator commands (check, audit verify, clients list, keys list, realms list) run without the master key; a command that seals still asks for it', async () => {
    const env = { ...process.env, COREGATE_MASTER_KEY: '' };
    const readOnly = [['check'], ['audit', 'verify'], ['clients', 'list', '--realm', 'sandbox'], ['keys', 'list', '--realm', 'sandbox'], ['realms', 'list']];
    // The commands are independent (they only read, the sealing one fails before writing): run together, their process starts overlap.
    const [sealing, ...results] = await Promise.all([
      runCli(['clients', 'rotate-secret', '--realm', 'sandbox', '--client-id', demo.treasury.clientId, '--db', dbUrl()], { env }),
      ...readOnly.map((args) => runCli([...args, '--db', dbUrl(), '--json'], { env })),
    ]);
    readOnly.forEach((args, index) => {
      const result = results[index]!;
      assert.equal(result.code, 0, `${args.join(' ')}: exit ${result.code}: ${result.stderr}`);
      assert.doesNotMatch(result.stderr, /COREGATE_MASTER_KEY/);
      JSON.parse(result.stdout);
    });
    assert.notEqual(sealing.code, 0);
    assert.match(sealing.stderr, /COREGATE_MASTER_KEY/);
  });

  test('restarting without the master key and without a data file fails too, naming COREGATE_MASTER_KEY', async () => {
    await assert.rejects(startTestServer({ db: dbUrl(), data: null }), (error: Error) => {
      assert.match(error.message, /COREGATE_MASTER_KEY/);
      return true;
    });
  });

  test(
    'a refused start (no master key, no data file) leaves no database connection open',
    { skip: target.name === 'postgres' ? false : 'counted through pg_stat_activity: PostgreSQL only' },
    async () => {
      const database = new URL(dbUrl()).pathname.slice(1);
      const admin = new pg.Client({ connectionString: postgresAdminUrl });
      await admin.connect();
      const connections = async () =>
        Number((await admin.query<{ count: string }>('select count(*) as count from pg_stat_activity where datname = $1', [database])).rows[0]?.count);
      try {
        // The earlier tests' probe store (test/helpers/stores.ts) is not the server's: it is closed before counting.
        await closeProbeStores();
        const before = await connections();
        await assert.rejects(startTestServer({ db: dbUrl(), data: null }), /COREGATE_MASTER_KEY/);
        assert.equal(await connections(), before, 'the refused instance left its database connections open');
      } finally {
        await admin.end();
      }
    },
  );

  test('restarting with a wrong master key fails clearly (names COREGATE_MASTER_KEY, says it does not open the secrets)', async () => {
    await assert.rejects(startTestServer({ db: dbUrl(), env: { COREGATE_MASTER_KEY: newMasterKey() } }), (error: Error) => {
      assert.match(error.message, /COREGATE_MASTER_KEY/);
      assert.match(error.message, /wrong master key|does not open/i);
      return true;
    });
  });

  test('a master key shorter than 32 characters is refused', async () => {
    await assert.rejects(startTestServer({ db: dbUrl(), env: { COREGATE_MASTER_KEY: 'x'.repeat(31) } }), (error: Error) => {
      assert.match(error.message, /COREGATE_MASTER_KEY/);
      assert.match(error.message, /32/);
      return true;
    });
  });

  test('rotating with the master key seals the new key, and the server signs with it', async () => {
    const store = await openStore(dbUrl());
    const kid = await rotateSigningKey(store, new Vault(masterKey), demo.realm, Date.now()).finally(() => store.close());
    const row = (await signingKeyRows(dbUrl(), demo.realm)).find((r) => r.kid === kid);
    assert.ok(row?.private_jwk.startsWith('enc:v1:'));
    const server = await startTestServer({ db: dbUrl(), env: { COREGATE_MASTER_KEY: masterKey } });
    try {
      assert.equal(kidOf(await demoToken(server)), kid);
    } finally {
      await server.close();
    }
  });

  // Runs last in this suite: when it fails it leaves a plaintext key behind.
  test('keys rotate (CLI) without the master key on an encrypted store is refused and stores no plaintext private key', async () => {
    const result = await cli(['keys', 'rotate', '--realm', demo.realm, '--db', dbUrl(), '--json'], { COREGATE_MASTER_KEY: '' });
    const rows = await signingKeyRows(dbUrl());
    const plaintext = rows.filter((row) => !row.private_jwk.startsWith('enc:v1:')).map((row) => row.kid);
    assert.deepEqual(plaintext, [], 'a private key was stored unencrypted in an encrypted store');
    assert.notEqual(result.code, 0, 'the rotation was accepted without the master key');
    assert.match(result.stderr, /COREGATE_MASTER_KEY/);
  });
});
