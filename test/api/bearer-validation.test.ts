/**
 * Bearer validation of the business API (docs/api.md, "Tokens"): 401 for a missing,
 * malformed, forged, expired, not-yet-valid, revoked or foreign token, with RFC 6750 challenges;
 * only asymmetric algorithms; tokens of an external Keycloak-shaped issuer checked against its
 * JWKS (refetched, rate-limited, on an unknown kid); 403 for a missing scope and for a user or
 * workstation that is not active in the core's directory; error records at top level.
 * Real HTTP against a started server, real tokens, on each store.
 */
// @starts-early: among the slowest files of a quiet run
import { systemClock } from '../../src/clock/system-clock.js';
import assert from 'node:assert/strict';
import { randomUUID, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';
import { Keyring } from '../../src/auth/keyring.js';
import { Vault } from '../../src/auth/vault.js';
import { findRealm } from '../../src/store/realms.js';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send, uuidPattern, type HttpResult } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { demo, demoToken, postForm, testDeployment, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { assertErrorRecord } from '../helpers/error-record.js';

const initiateRecordPath = `POST ${initiatePath}`;
const audience = 'coregate-api';

// ---------------------------------------------------------------------------------------------
// HTTP helpers
// ---------------------------------------------------------------------------------------------

/** POST /v1/term-deposits/initiate with a fresh correlation id; `authorization` is sent as given (null: none). */
function initiateWith(server: TestServer, authorization: string | null, body: unknown = depositBody()): Promise<HttpResult> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'x-correlation-id': randomUUID(),
  };
  if (authorization !== null) headers.authorization = authorization;
  return send(`${server.url}${initiatePath}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

function initiate(server: TestServer, token: string, body?: unknown): Promise<HttpResult> {
  return initiateWith(server, `Bearer ${token}`, body);
}

// ---------------------------------------------------------------------------------------------
// Assertions
// ---------------------------------------------------------------------------------------------

function assertTermDepositError(response: HttpResult, status: number, code: string, detailReason: string, path = initiateRecordPath): void {
  assertErrorRecord(response, { status, code, detailReason, path });
}

/** 401 for a token that was sent but is not acceptable: TD-401-002 and an invalid_token challenge. */
function assertInvalidToken(response: HttpResult): void {
  assertTermDepositError(response, 401, 'TD-401-002', 'INVALID_TOKEN');
  const challenge = response.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer realm="[^"]+"/, challenge);
  assert.match(challenge, /error="invalid_token"/, challenge);
  assert.match(challenge, /error_description="[^"]+"/, challenge);
}

function assertExecuted(response: HttpResult): void {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.match(String(response.body.operationReference), uuidPattern);
  assert.equal(typeof response.body.termDepositAccount, 'string');
}

function assertForbiddenByDirectory(response: HttpResult, code: 'TD-403-002' | 'TD-403-003'): void {
  assertTermDepositError(response, 403, code, code === 'TD-403-002' ? 'USER_NOT_AUTHORIZED' : 'WORKSTATION_NOT_AUTHORIZED');
}

// ---------------------------------------------------------------------------------------------
// Tokens: signing keys we control, hand-made tokens
// ---------------------------------------------------------------------------------------------

interface TestKey {
  kid: string;
  alg: string;
  privateKey: CryptoKey | KeyObject;
  publicJwk: JWK;
}

async function newKey(alg: 'RS256' | 'ES256' = 'RS256'): Promise<TestKey> {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true });
  const kid = `test-${alg.toLowerCase()}-${randomUUID()}`;
  return { kid, alg, privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

/** Claims whose value is undefined are left out of the token. */
async function signToken(key: TestKey, claims: Record<string, unknown>): Promise<string> {
  const present = Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined)) as JWTPayload;
  return new SignJWT(present).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** A token as a Keycloak realm issues it for a service account (client credentials). */
function keycloakClaims(issuerUrl: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return {
    exp: now + 300,
    iat: now,
    jti: randomUUID(),
    iss: issuerUrl,
    aud: [audience, 'account'],
    sub: '5f0e3c1e-6a53-4b63-9d0c-4bbf0c1f7a11',
    typ: 'Bearer',
    azp: 'kc-treasury',
    client_id: 'kc-treasury',
    scope: 'openid profile email termDeposit:initiate termDeposit:retrieve',
    preferred_username: 'service-account-kc-treasury',
    backbone_user: 'jdoe',
    workstation: 'WS-BRANCH-07',
    ...overrides,
  };
}

/** Claims of coregate's own sandbox realm, as its token endpoint would issue them for treasury-app. */
function realmClaims(server: TestServer, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return {
    iss: `${server.coregate.publicUrl}/realms/${demo.realm}`,
    sub: randomUUID(),
    aud: audience,
    azp: demo.treasury.clientId,
    client_id: demo.treasury.clientId,
    iat: now,
    exp: now + 300,
    jti: randomUUID(),
    typ: 'Bearer',
    scope: 'termDeposit:initiate termDeposit:retrieve',
    preferred_username: `service-account-${demo.treasury.clientId}`,
    backbone_user: 'svc-treasury',
    workstation: 'WS-TREASURY-01',
    ...overrides,
  };
}

/** The sandbox realm's active signing key, read from the server's store (no master key in tests). */
async function realmKey(server: TestServer): Promise<TestKey> {
  const realm = await findRealm(server.coregate.store.db, demo.realm);
  assert.ok(realm, 'the sandbox realm exists');
  const active = await new Keyring(server.coregate.store, new Vault(undefined), systemClock).activeKey(realm);
  assert.ok(active.signingKey, 'the active key has its private half');
  return { kid: active.kid, alg: active.alg, privateKey: active.signingKey, publicJwk: active.publicJwk };
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Flips one bit of the signature itself (not of the base64url padding bits). */
function flipSignature(token: string): string {
  const [header, payload, signature] = token.split('.');
  const bytes = Buffer.from(signature ?? '', 'base64url');
  bytes[10] = (bytes[10] ?? 0) ^ 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/**
 * Waits for the start of the next wall-clock second. jose compares whole epoch seconds, so a
 * token signed with `exp = now - 29` is within the 30 s skew only if it is verified in the same
 * second it was signed: starting at a second boundary leaves the request ~980 ms.
 */
async function startOfNextSecond(): Promise<void> {
  await sleep(1000 - (Date.now() % 1000) + 15);
}

/**
 * Runs `work` with Date.now() moved `offsetMs` ahead (jose's JWKS cache measures its refetch
 * cooldown with Date.now()); `new Date()`, which the claim checks use, is unaffected.
 */
async function withClockAhead<T>(offsetMs: number, work: () => Promise<T>): Promise<T> {
  const realNow = Date.now;
  Date.now = () => realNow.call(Date) + offsetMs;
  try {
    return await work();
  } finally {
    Date.now = realNow;
  }
}

// ---------------------------------------------------------------------------------------------
// A fake Keycloak: JWKS of realms `bank` (trusted by the API) and `other` (not trusted)
// ---------------------------------------------------------------------------------------------

class FakeKeycloak {
  readonly #server: Server;
  /** Published keys per realm. */
  readonly published = new Map<string, JWK[]>();
  /** JWKS downloads per realm. */
  readonly fetches = new Map<string, number>();

  private constructor(server: Server) {
    this.#server = server;
  }

  static async start(): Promise<FakeKeycloak> {
    let instance: FakeKeycloak | undefined;
    const server = createServer((request, response) => {
      const match = /^\/realms\/([^/]+)\/protocol\/openid-connect\/certs$/.exec(request.url ?? '');
      const keys = match?.[1] === undefined ? undefined : instance?.published.get(match[1]);
      if (request.method !== 'GET' || !match?.[1] || keys === undefined) {
        response.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"Realm does not exist"}');
        return;
      }
      instance?.fetches.set(match[1], (instance.fetches.get(match[1]) ?? 0) + 1);
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }));
    });
    instance = new FakeKeycloak(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return instance;
  }

  issuer(realm: string): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/realms/${realm}`;
  }

  publish(realm: string, keys: TestKey[]): void {
    this.published.set(realm, keys.map((key) => key.publicJwk));
  }

  fetchCount(realm: string): number {
    return this.fetches.get(realm) ?? 0;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

const keycloak = await FakeKeycloak.start();
after(() => keycloak.close());
const bankIssuer = keycloak.issuer('bank');
const otherIssuer = keycloak.issuer('other');
/** Trusted by the API, but the fake Keycloak has no such realm: its JWKS answers 404. */
const unreachableIssuer = keycloak.issuer('retired');

/** Runs `coregate ...` on the server's store (test/helpers/cli.ts); fails the test on a non-zero exit. */
async function coregateCli(args: string[]): Promise<string> {
  const result = await runCli(args);
  if (result.code !== 0) throw new Error(`coregate ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  return result.stdout;
}

// =============================================================================================
// Bearer validation, own realm and external issuer
// =============================================================================================

describeEachStore(
  'business API Bearer validation',
  ({ server }) => {
    let bankRsa: TestKey;
    let bankEc: TestKey;
    let otherKey: TestKey;

    before(async () => {
      bankRsa = await newKey('RS256');
      bankEc = await newKey('ES256');
      otherKey = await newKey('RS256');
      keycloak.publish('bank', [bankRsa, bankEc]);
      keycloak.publish('other', [otherKey]);
    });

    // --- without a token → 401 -----------------------------------------------------------------

    test('no Authorization header → 401 UNAUTHORIZED TD-401-001 with WWW-Authenticate: Bearer realm=... and no error code (RFC 6750 §3.1)', async () => {
      const response = await initiateWith(server(), null);
      assertTermDepositError(response, 401, 'TD-401-001', 'MISSING_TOKEN');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="[^"]+"$/);
    });

    test('no token on the retrieve route → 401 with the record\'s path naming that route', async () => {
      const response = await send(`${server().url}/v1/term-deposits/TD000000000000001/retrieve`, { headers: { accept: 'application/json' } });
      assertTermDepositError(response, 401, 'TD-401-001', 'MISSING_TOKEN', 'GET /v1/term-deposits/TD000000000000001/retrieve');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="[^"]+"/);
    });

    test('no token on GET /v1/operations/{reference} → 401 with a Bearer challenge', async () => {
      const response = await send(`${server().url}/v1/operations/${randomUUID()}`, {});
      assert.equal(response.status, 401);
      assert.equal(response.body.reason, 'UNAUTHORIZED');
      assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="[^"]+"/);
    });

    for (const [name, header] of [
      ['a Basic header ("Basic x")', 'Basic x'],
      ['"Bearer" alone', 'Bearer'],
      ['"Bearer " with an empty token', 'Bearer '],
      ['a token with a space inside', 'Bearer abc def'],
    ] as const) {
      test(`malformed Authorization header, ${name} → 401 UNAUTHORIZED with a Bearer challenge`, async () => {
        const response = await initiateWith(server(), header);
        assert.equal(response.status, 401, JSON.stringify(response.body));
        assert.equal(response.body.reason, 'UNAUTHORIZED');
        assert.equal(response.body.path, initiateRecordPath);
        assert.match(response.body.errordetail[0].code, /^TD-401-00[12]$/);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="[^"]+"/);
      });
    }

    test('the Bearer scheme is case-insensitive (RFC 7235): "bearer <token>" is accepted', async () => {
      assertExecuted(await initiateWith(server(), `bearer ${await demoToken(server())}`));
    });

    test('a garbage token that is no JWT → 401 invalid_token', async () => {
      assertInvalidToken(await initiate(server(), 'not-a-jwt'));
      assertInvalidToken(await initiate(server(), 'abc.def.ghi'));
    });

    test('a real token with one flipped signature bit → 401 invalid_token', async () => {
      const token = await demoToken(server());
      assertExecuted(await initiate(server(), token));
      assertInvalidToken(await initiate(server(), flipSignature(token)));
    });

    test('a real token whose payload was altered (scope added) keeps its signature → 401 invalid_token', async () => {
      const token = await demoToken(server(), demo.reporting);
      const [header, , signature] = token.split('.');
      const claims = { ...decodeJwt(token), scope: 'termDeposit:initiate termDeposit:retrieve' };
      assertInvalidToken(await initiate(server(), `${header}.${base64url(claims)}.${signature}`));
    });

    test('an unsigned token (alg: none) with valid claims → 401 invalid_token', async () => {
      const claims = realmClaims(server());
      assertInvalidToken(await initiate(server(), `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(claims)}.`));
      const kcClaims = keycloakClaims(bankIssuer);
      assertInvalidToken(await initiate(server(), `${base64url({ alg: 'none', typ: 'JWT', kid: bankRsa.kid })}.${base64url(kcClaims)}.`));
    });

    test('an HS256 token with valid claims, signed with a shared secret → 401 invalid_token', async () => {
      const secret = new TextEncoder().encode('a-shared-secret-that-is-long-enough-for-hs256!!');
      const token = await new SignJWT(realmClaims(server()) as JWTPayload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(secret);
      assertInvalidToken(await initiate(server(), token));
    });

    test('an HS256 token for the trusted issuer, keyed with the issuer\'s public RSA modulus (key confusion) → 401 invalid_token', async () => {
      const secret = Buffer.from(String(bankRsa.publicJwk.n), 'base64url');
      const token = await new SignJWT(keycloakClaims(bankIssuer) as JWTPayload)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: bankRsa.kid })
        .sign(secret);
      assertInvalidToken(await initiate(server(), token));
    });

    // --- exp / nbf with at most 30 s of skew --------------------------------------------------

    for (const issuerKind of ['own realm', 'external issuer'] as const) {
      const sign = async (overrides: Record<string, unknown>) =>
        issuerKind === 'own realm'
          ? signToken(await realmKey(server()), realmClaims(server(), overrides))
          : signToken(bankRsa, keycloakClaims(bankIssuer, overrides));

      test(`${issuerKind}: a correctly signed token is accepted (control for the skew tests)`, async () => {
        assertExecuted(await initiate(server(), await sign({})));
      });

      test(`${issuerKind}: exp 31 s in the past → 401 invalid_token (skew at most 30 s)`, async () => {
        const now = nowSeconds();
        const response = await initiate(server(), await sign({ iat: now - 331, exp: now - 31 }));
        assertInvalidToken(response);
        assert.match(response.body.message, /expired/i);
      });

      test(`${issuerKind}: exp 29 s in the past → accepted (within the 30 s skew)`, async () => {
        assertExecuted(await initiate(server(), await sign({}))); // warm the key caches
        const key = issuerKind === 'own realm' ? await realmKey(server()) : bankRsa;
        await startOfNextSecond();
        const now = nowSeconds();
        const claims = issuerKind === 'own realm' ? realmClaims(server(), { iat: now - 329, exp: now - 29 }) : keycloakClaims(bankIssuer, { iat: now - 329, exp: now - 29 });
        assertExecuted(await initiate(server(), await signToken(key, claims)));
      });

      test(`${issuerKind}: nbf 40 s in the future → 401 invalid_token`, async () => {
        assertInvalidToken(await initiate(server(), await sign({ nbf: nowSeconds() + 40 })));
      });

      test(`${issuerKind}: nbf 20 s in the future → accepted (within the 30 s skew)`, async () => {
        assertExecuted(await initiate(server(), await sign({ nbf: nowSeconds() + 20 })));
      });

      test(`${issuerKind}: a token without exp → 401 invalid_token`, async () => {
        assertInvalidToken(await initiate(server(), await sign({ exp: undefined })));
      });

      test(`${issuerKind}: wrong aud → 401 invalid_token`, async () => {
        assertInvalidToken(await initiate(server(), await sign({ aud: 'some-other-api' })));
        assertInvalidToken(await initiate(server(), await sign({ aud: ['account', 'broker'] })));
        assertInvalidToken(await initiate(server(), await sign({ aud: undefined })));
      });

      test(`${issuerKind}: a token naming no client (neither client_id nor azp) → 401 invalid_token`, async () => {
        assertInvalidToken(await initiate(server(), await sign({ client_id: undefined, azp: undefined })));
      });
    }

    // --- issuers -------------------------------------------------------------------------------

    test('unknown iss: an issuer outside the allow-list → 401 invalid_token, whoever signed it', async () => {
      assertInvalidToken(await initiate(server(), await signToken(bankRsa, keycloakClaims('https://idp.example.com/realms/bank'))));
      assertInvalidToken(await initiate(server(), await signToken(await realmKey(server()), realmClaims(server(), { iss: 'https://idp.example.com/realms/sandbox' }))));
    });

    test('unknown iss: coregate\'s own URL with a realm that does not exist → 401 invalid_token', async () => {
      const claims = realmClaims(server(), { iss: `${server().coregate.publicUrl}/realms/no-such-realm` });
      assertInvalidToken(await initiate(server(), await signToken(await realmKey(server()), claims)));
    });

    test('forgery: a token claiming the sandbox realm as issuer but signed with a key the realm never published → 401', async () => {
      assertInvalidToken(await initiate(server(), await signToken(bankRsa, realmClaims(server()))));
    });

    test('forgery: a token claiming the trusted Keycloak issuer but signed by another issuer\'s key → 401', async () => {
      assertInvalidToken(await initiate(server(), await signToken(otherKey, keycloakClaims(bankIssuer))));
    });

    // --- external issuer (Keycloak realm) -------------------------------------------------

    test('external issuer: a Keycloak-shaped RS256 token of a trusted issuer → 200 on initiate', async () => {
      const token = await signToken(bankRsa, keycloakClaims(bankIssuer));
      assert.equal(decodeProtectedHeader(token).kid, bankRsa.kid);
      const response = await initiate(server(), token);
      assertExecuted(response);
      assert.ok(keycloak.fetchCount('bank') >= 1, 'the API fetched the issuer\'s JWKS');
    });

    test('external issuer: a single-string aud equal to the API\'s audience is accepted too', async () => {
      assertExecuted(await initiate(server(), await signToken(bankRsa, keycloakClaims(bankIssuer, { aud: audience }))));
    });

    test('external issuer: an ES256 token is accepted (asymmetric algorithms other than RS256)', async () => {
      assertExecuted(await initiate(server(), await signToken(bankEc, keycloakClaims(bankIssuer))));
    });

    test('external issuer: a token with azp but no client_id claim (older Keycloak) → 200', async () => {
      assertExecuted(await initiate(server(), await signToken(bankRsa, keycloakClaims(bankIssuer, { client_id: undefined }))));
    });

    test('external issuer: wrong audience → 401 invalid_token', async () => {
      assertInvalidToken(await initiate(server(), await signToken(bankRsa, keycloakClaims(bankIssuer, { aud: 'account' }))));
    });

    test('external issuer: an untrusted issuer with a real JWKS (another Keycloak realm) → 401 invalid_token', async () => {
      const fetchesBefore = keycloak.fetchCount('other');
      assertInvalidToken(await initiate(server(), await signToken(otherKey, keycloakClaims(otherIssuer))));
      assert.equal(keycloak.fetchCount('other'), fetchesBefore, 'an untrusted issuer\'s keys are never fetched');
    });

    test('external issuer: a trusted issuer whose JWKS cannot be fetched (404) → 401 invalid_token, not 500', async () => {
      const response = await initiate(server(), await signToken(bankRsa, keycloakClaims(unreachableIssuer)));
      assertInvalidToken(response);
    });

    test('external issuer: a token without the operation\'s scope → 403 insufficient_scope', async () => {
      const token = await signToken(bankRsa, keycloakClaims(bankIssuer, { scope: 'openid profile termDeposit:retrieve' }));
      const response = await initiate(server(), token);
      assertTermDepositError(response, 403, 'TD-403-001', 'INSUFFICIENT_SCOPE');
      assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    });

    // --- scopes ----------------------------------------------------------------------------------

    test('scope: reporting-app (termDeposit:retrieve only) → 403 FORBIDDEN TD-403-001 with error="insufficient_scope" and the scope', async () => {
      const response = await initiate(server(), await demoToken(server(), demo.reporting));
      assertTermDepositError(response, 403, 'TD-403-001', 'INSUFFICIENT_SCOPE');
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer realm="[^"]+"/, challenge);
      assert.match(challenge, /error="insufficient_scope"/, challenge);
      assert.match(challenge, /scope="termDeposit:initiate"/, challenge);
      assert.match(response.body.message, /termDeposit:initiate/);
    });

    test('scope: a treasury token narrowed with scope=termDeposit:retrieve → 403 on initiate', async () => {
      const token = await demoToken(server(), demo.treasury, { scope: 'termDeposit:retrieve' });
      const response = await initiate(server(), token);
      assertTermDepositError(response, 403, 'TD-403-001', 'INSUFFICIENT_SCOPE');
      assert.match(response.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    });

    test('scope: a treasury token narrowed to termDeposit:initiate is enough for initiate', async () => {
      assertExecuted(await initiate(server(), await demoToken(server(), demo.treasury, { scope: 'termDeposit:initiate' })));
    });

    test('scope: the retrieve route needs termDeposit:retrieve (a token narrowed to initiate → 403)', async () => {
      const created = await initiate(server(), await demoToken(server()));
      assertExecuted(created);
      const retrievePath = `/v1/term-deposits/${created.body.termDepositAccount}/retrieve`;
      const narrowed = await demoToken(server(), demo.treasury, { scope: 'termDeposit:initiate' });
      const refused = await send(`${server().url}${retrievePath}`, { headers: { authorization: `Bearer ${narrowed}` } });
      assertTermDepositError(refused, 403, 'TD-403-001', 'INSUFFICIENT_SCOPE', `GET ${retrievePath}`);
      const reporting = await send(`${server().url}${retrievePath}`, { headers: { authorization: `Bearer ${await demoToken(server(), demo.reporting)}` } });
      assert.equal(reporting.status, 200, JSON.stringify(reporting.body));
      assert.equal(reporting.body.termDepositAccount, created.body.termDepositAccount);
    });

    // --- directory -------------------------------------------------------------------------------

    test('directory: a token whose backbone_user is Disabled (former-clerk) → 403 TD-403-002', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'former-clerk', workstation: 'WS-BRANCH-07' });
      const response = await initiate(server(), token);
      assertForbiddenByDirectory(response, 'TD-403-002');
      assert.match(response.body.message, /former-clerk/);
    });

    test('directory: a token whose workstation is Disabled (WS-RETIRED-02) → 403 TD-403-003', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'jdoe', workstation: 'WS-RETIRED-02' });
      const response = await initiate(server(), token);
      assertForbiddenByDirectory(response, 'TD-403-003');
      assert.match(response.body.message, /WS-RETIRED-02/);
    });

    test('directory: a user unknown to the directory → 403 TD-403-002', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'nobody-at-this-bank', workstation: 'WS-BRANCH-07' });
      assertForbiddenByDirectory(await initiate(server(), token), 'TD-403-002');
    });

    test('directory: a workstation unknown to the directory → 403 TD-403-003', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'jdoe', workstation: 'WS-NOT-IN-DIRECTORY' });
      assertForbiddenByDirectory(await initiate(server(), token), 'TD-403-003');
    });

    test('directory: an active user on an active workstation → 200', async () => {
      assertExecuted(await initiate(server(), await demoToken(server(), demo.treasury, { username: 'jdoe', workstation: 'WS-BRANCH-07' })));
    });

    test('directory: the technical user and default workstation of treasury-app (svc-treasury, WS-TREASURY-01) → 200', async () => {
      const token = await demoToken(server());
      assert.equal(decodeJwt(token).backbone_user, 'svc-treasury');
      assertExecuted(await initiate(server(), token));
    });

    test('directory: a token without user claims (branch-portal) → 200', async () => {
      const token = await demoToken(server(), demo.branch);
      assert.equal('backbone_user' in decodeJwt(token), false);
      assertExecuted(await initiate(server(), token));
    });

    test('directory: external issuer tokens are checked too (Disabled user, unknown workstation → 403)', async () => {
      assertForbiddenByDirectory(await initiate(server(), await signToken(bankRsa, keycloakClaims(bankIssuer, { backbone_user: 'former-clerk' }))), 'TD-403-002');
      assertForbiddenByDirectory(await initiate(server(), await signToken(bankRsa, keycloakClaims(bankIssuer, { workstation: 'WS-ATTACKER' }))), 'TD-403-003');
    });

    test('directory: an external token without user claims → 200', async () => {
      const token = await signToken(bankRsa, keycloakClaims(bankIssuer, { backbone_user: undefined, workstation: undefined }));
      assertExecuted(await initiate(server(), token));
    });

    test('order: a token without the scope and with a Disabled user → 403 for the scope (TD-403-001)', async () => {
      const token = await demoToken(server(), demo.treasury, { username: 'former-clerk', workstation: 'WS-BRANCH-07', scope: 'termDeposit:retrieve' });
      assertTermDepositError(await initiate(server(), token), 403, 'TD-403-001', 'INSUFFICIENT_SCOPE');
    });

    // --- error records -------------------------------------------------------------------------

    test('error records: 401 and 403 records are error records at top level (no {"error": ...} wrapper) for term deposits', async () => {
      const unauthorized = await initiateWith(server(), null);
      const forbidden = await initiate(server(), await demoToken(server(), demo.reporting));
      for (const response of [unauthorized, forbidden]) {
        assert.equal('error' in response.body, false);
        assert.equal(response.body.status, response.status);
        assert.equal(response.body.path, 'POST /v1/term-deposits/initiate');
        assert.match(response.body.errordetail[0].code, /^TD-40[13]-00\d$/);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
      }
    });
  },
  { flags: { trustedIssuer: [bankIssuer, unreachableIssuer] } },
);

// =============================================================================================
// Operator commands on the realm: keys rotate, realms revoke-tokens
// =============================================================================================

describeEachStore('business API Bearer validation: realm key rotation and revocation', ({ server, dbUrl }) => {
  test('after `coregate keys rotate`, tokens signed with the old key still pass and new tokens (new kid) pass', async () => {
    const oldToken = await demoToken(server());
    assertExecuted(await initiate(server(), oldToken));
    const printed = JSON.parse(await coregateCli(['keys', 'rotate', '--realm', demo.realm, '--db', dbUrl(), '--json'])) as { kid: string };
    // The token endpoint signs with the realm as its snapshot holds it (at most authSnapshotMaxAgeMs old).
    const newToken = await waitFor('a token signed with the new key', async () => {
      const token = await demoToken(server());
      return decodeProtectedHeader(token).kid === printed.kid ? token : undefined;
    });
    assert.notEqual(decodeProtectedHeader(oldToken).kid, printed.kid);
    assertExecuted(await initiate(server(), oldToken));
    assertExecuted(await initiate(server(), newToken));
  });

  test('after `coregate realms revoke-tokens`, a token of the realm issued before → 401 invalid_token; a new token passes', async () => {
    const oldToken = await demoToken(server());
    assertExecuted(await initiate(server(), oldToken));
    // The not-before is whole seconds: make sure the old token's iat is strictly before it.
    const iat = Number(decodeJwt(oldToken).iat);
    while (nowSeconds() <= iat) await sleep(50);
    const printed = JSON.parse(await coregateCli(['realms', 'revoke-tokens', '--realm', demo.realm, '--db', dbUrl(), '--json'])) as { notBefore: number };
    assert.ok(printed.notBefore > iat);
    // The API reads the realm from a snapshot at most authSnapshotMaxAgeMs old (docs/deployment.md,
    // "What an instance keeps in memory").
    const refused = await waitFor(
      'the revoked token to be refused',
      async () => {
        const answer = await initiate(server(), oldToken);
        return answer.status === 401 ? answer : undefined;
      },
      authSnapshotMaxAgeMs + 2_000,
    );
    assertInvalidToken(refused);
    assert.match(refused.body.message, /not-before|revoked/i);

    const issued = await postForm(server().tokenUrl(), {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    });
    assert.equal(issued.status, 200);
    assert.equal(issued.body['not-before-policy'], printed.notBefore);
    assertExecuted(await initiate(server(), issued.body.access_token as string));
  });
});

// =============================================================================================
// External issuer key rotation: refetch on an unknown kid, rate-limited
// =============================================================================================

describeEachStore(
  'business API Bearer validation: external issuer key rotation',
  ({ server }) => {
    let first: TestKey;
    let second: TestKey;

    before(async () => {
      first = await newKey('RS256');
      second = await newKey('RS256');
      keycloak.publish('bank', [first]);
    });

    test('a kid the issuer publishes only after a rotation: refused while the refetch cooldown runs, then refetched and accepted', { skip: testDeployment === 'two-instances' ? 'each instance keeps its own refetch cooldown (docs/deployment.md)' : undefined }, async () => {
      assertExecuted(await initiate(server(), await signToken(first, keycloakClaims(bankIssuer))));
      const fetchesAfterFirst = keycloak.fetchCount('bank');
      assert.ok(fetchesAfterFirst >= 1);

      // The issuer rotates: the new key is published beside the old one.
      keycloak.publish('bank', [first, second]);

      // Within 30 s of the last download, an unknown kid does not trigger another (rate limit).
      const early = await initiate(server(), await signToken(second, keycloakClaims(bankIssuer)));
      assertInvalidToken(early);
      assert.equal(keycloak.fetchCount('bank'), fetchesAfterFirst, 'no refetch within the cooldown');

      // Once the cooldown has passed, the unknown kid makes the API download the JWKS again.
      const rotatedToken = await signToken(second, keycloakClaims(bankIssuer));
      const late = await withClockAhead(31_000, () => initiate(server(), rotatedToken));
      assertExecuted(late);
      assert.equal(keycloak.fetchCount('bank'), fetchesAfterFirst + 1, 'exactly one refetch');

      // Both keys now verify from the refreshed cache, without further downloads.
      assertExecuted(await initiate(server(), await signToken(first, keycloakClaims(bankIssuer))));
      assertExecuted(await initiate(server(), await signToken(second, keycloakClaims(bankIssuer))));
      assert.equal(keycloak.fetchCount('bank'), fetchesAfterFirst + 1);
    });
  },
  { flags: { trustedIssuer: [bankIssuer] } },
);
