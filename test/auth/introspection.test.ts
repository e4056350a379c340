/**
 * Token introspection (RFC 7662; docs/auth.md, "Introspection"): client-authenticated; an active
 * token answers its claims, anything else `{ active: false }` and nothing more. Realm not-before
 * (CLI `realms revoke-tokens`) and disabled clients (CLI `clients disable`) make tokens inactive.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { before, test } from 'node:test';
import { SignJWT, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, importJWK, type JWTPayload } from 'jose';
import { runCli, type CliResult } from '../helpers/cli.js';
import { readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { basicAuth, demo, demoToken, postForm, type TestServer } from '../helpers/server.js';
import { withStore } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';
import { assertOAuthError as assertOAuthErrorAnswer } from '../helpers/error-record.js';

const { treasury, branch, reporting } = demo;
type DemoClient = { clientId: string; secret: string };

// ---------------------------------------------------------------------------------------------
// Helpers of this file
// ---------------------------------------------------------------------------------------------

function cli(args: string[]): Promise<CliResult> {
  return runCli(args, { timeoutMs: 0 });
}

function introspectUrl(server: TestServer, realm: string = demo.realm): string {
  return `${server.realmUrl(realm)}/protocol/openid-connect/token/introspect`;
}

/** Introspects with client_secret_post as `client` (reporting-app by default). */
function introspect(server: TestServer, token: string, client: DemoClient = reporting, realm: string = demo.realm) {
  return postForm(introspectUrl(server, realm), { token, client_id: client.clientId, client_secret: client.secret });
}

async function tokenResponse(server: TestServer, client: DemoClient, realm: string = demo.realm) {
  return postForm(server.tokenUrl(realm), { grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret });
}

function assertInactive(response: { status: number; headers: Headers; body: any }): void {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.deepEqual(response.body, { active: false });
  assert.equal(response.headers.get('cache-control'), 'no-store');
}

/** An OAuth error (test/helpers/error-record.ts) that answers nothing of the token (no `active`). */
function assertOAuthError(response: { status: number; headers: Headers; body: any }, status: number, error: string): void {
  assertOAuthErrorAnswer(response, status, error);
  assert.equal(response.body.active, undefined);
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** The realm's active signing key, read from the store (plain JSON: these stores have no master key). */
async function realmSigningKey(dbUrl: string, realm: string = demo.realm) {
  return withStore(dbUrl, async (store) => {
    const row = await store.db
      .selectFrom('signing_keys')
      .select(['kid', 'alg', 'private_jwk'])
      .where('realm', '=', realm)
      .where('retired_at', 'is', null)
      .executeTakeFirstOrThrow();
    return { kid: row.kid, alg: row.alg, key: await importJWK(JSON.parse(row.private_jwk), row.alg) };
  });
}

/** Signs `claims` exactly as given (no defaults added). */
async function signToken(claims: JWTPayload, key: Parameters<SignJWT['sign']>[0], header: { alg: string; kid: string }): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ ...header, typ: 'JWT' }).sign(key);
}

// A data file: the demo realm plus a second realm, for tokens of another realm.
const partner = { clientId: 'partner-app', secret: 'partner-app-secret-0123456789abcdef0123' };
const twoRealmsFile = (() => {
  const data = readDemoData<SandboxData>();
  data.realms.push({
    name: 'partner',
    audience: 'coregate-api',
    clients: [{ clientId: partner.clientId, secret: partner.secret, scopes: ['termDeposit:retrieve'] }],
  });
  return writeTempDataFile(data, 'coregate-introspection-test-');
})();

// ---------------------------------------------------------------------------------------------
// Active and inactive tokens, client authentication, request errors
// ---------------------------------------------------------------------------------------------

describeEachStore(
  'token introspection (RFC 7662)',
  ({ server, dbUrl }) => {
    test('a fresh token → active: true, token_type Bearer, and exactly the token\'s claims', async () => {
      const token = await demoToken(server(), treasury);
      const response = await introspect(server(), token);
      assert.equal(response.status, 200);
      const { active, token_type: tokenType, ...claims } = response.body;
      assert.equal(active, true);
      assert.equal(tokenType, 'Bearer');
      assert.deepEqual(claims, decodeJwt(token));
      assert.equal(claims.client_id, treasury.clientId);
      assert.equal(claims.scope, 'termDeposit:initiate termDeposit:retrieve merchandisingLoan:execute');
      assert.equal(claims.iss, `${server().coregate.publicUrl}/realms/sandbox`);
      assert.equal(typeof claims.sub, 'string');
      assert.equal(typeof claims.exp, 'number');
      assert.equal(typeof claims.iat, 'number');
      assert.equal(claims.backbone_user, 'svc-treasury');
      assert.equal(claims.workstation, 'WS-TREASURY-01');
    });

    test('a token without an associated user → active, without backbone_user or workstation', async () => {
      const response = await introspect(server(), await demoToken(server(), branch));
      assert.equal(response.body.active, true);
      assert.equal(response.body.client_id, branch.clientId);
      assert.equal('backbone_user' in response.body, false);
      assert.equal('workstation' in response.body, false);
    });

    test('a narrowed token introspects with its narrowed scope', async () => {
      const token = await demoToken(server(), treasury, { scope: 'termDeposit:retrieve' });
      assert.equal((await introspect(server(), token)).body.scope, 'termDeposit:retrieve');
    });

    test('client_secret_basic authenticates the introspecting client', async () => {
      const token = await demoToken(server(), branch);
      const response = await postForm(introspectUrl(server()), { token }, { authorization: basicAuth(reporting.clientId, reporting.secret) });
      assert.equal(response.status, 200);
      assert.equal(response.body.active, true);
      assert.equal(response.body.client_id, branch.clientId);
    });

    test('a client may introspect its own token', async () => {
      const token = await demoToken(server(), branch);
      assert.equal((await introspect(server(), token, branch)).body.active, true);
    });

    test('a token_type_hint parameter (RFC 7662 §2.1) is accepted: the token is still found', async () => {
      const token = await demoToken(server(), branch);
      for (const hint of ['access_token', 'refresh_token']) {
        const response = await postForm(introspectUrl(server()), {
          token,
          token_type_hint: hint,
          client_id: reporting.clientId,
          client_secret: reporting.secret,
        });
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(response.body.active, true, `hint ${hint}`);
      }
    });

    test('Cache-Control: no-store and Pragma: no-cache on active and inactive answers', async () => {
      for (const token of [await demoToken(server()), 'garbage']) {
        const response = await introspect(server(), token);
        assert.equal(response.status, 200);
        assert.equal(response.headers.get('cache-control'), 'no-store');
        assert.equal(response.headers.get('pragma'), 'no-cache');
      }
    });

    // Inactive tokens: { active: false } and nothing more.
    test('a garbage string → { active: false } and nothing more', async () => {
      assertInactive(await introspect(server(), 'not-a-jwt'));
    });

    test('three dot-separated garbage segments → inactive', async () => {
      assertInactive(await introspect(server(), 'a.b.c'));
    });

    test('a token with a flipped signature → inactive', async () => {
      const token = await demoToken(server());
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const bytes = Buffer.from(signature, 'base64url');
      bytes[0] = bytes[0]! ^ 0x01;
      const flipped = `${header}.${payload}.${bytes.toString('base64url')}`;
      assert.notEqual(flipped, token);
      assertInactive(await introspect(server(), flipped));
    });

    test('a token whose payload was altered (original signature kept) → inactive', async () => {
      const token = await demoToken(server(), reporting);
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as JWTPayload;
      const widened = base64url(JSON.stringify({ ...claims, scope: 'termDeposit:initiate termDeposit:retrieve' }));
      assertInactive(await introspect(server(), `${header}.${widened}.${signature}`));
    });

    test('a token from another realm of the same server → inactive here (and active in its own realm)', async () => {
      const response = await tokenResponse(server(), partner, 'partner');
      assert.equal(response.status, 200, JSON.stringify(response.body));
      const token = response.body.access_token as string;
      assert.equal((await introspect(server(), token, partner, 'partner')).body.active, true);
      assertInactive(await introspect(server(), token));
    });

    test('a token signed by a generated key with an unknown kid → inactive', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const claims = decodeJwt(await demoToken(server()));
      assertInactive(await introspect(server(), await signToken(claims, privateKey, { alg: 'RS256', kid: 'unknown-kid' })));
    });

    test('a token with the realm\'s kid but signed by another key → inactive', async () => {
      const { privateKey } = await generateKeyPair('RS256');
      const real = await demoToken(server());
      const kid = decodeProtectedHeader(real).kid!;
      assertInactive(await introspect(server(), await signToken(decodeJwt(real), privateKey, { alg: 'RS256', kid })));
    });

    test('control: a token built here with the realm\'s own key and a real token\'s claims → active', async () => {
      // Proves that the constructed tokens below fail only because of the claim each one changes.
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const claims = { ...decodeJwt(await demoToken(server())), jti: 'built-by-the-test' };
      const response = await introspect(server(), await signToken(claims, key, { alg, kid }));
      assert.equal(response.body.active, true);
      assert.equal(response.body.jti, 'built-by-the-test');
    });

    test('an expired token (realm\'s own key, exp in the past) → inactive', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const now = Math.floor(Date.now() / 1000);
      const claims = { ...decodeJwt(await demoToken(server())), iat: now - 400, exp: now - 100 };
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('a token that expired one second ago → inactive (no clock tolerance at the issuer)', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const now = Math.floor(Date.now() / 1000);
      const claims = { ...decodeJwt(await demoToken(server())), iat: now - 300, exp: now - 1 };
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('a token of another issuer (realm\'s own key, foreign iss) → inactive', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const claims = { ...decodeJwt(await demoToken(server())), iss: 'https://idp.example/realms/sandbox' };
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('a token of another audience (realm\'s own key) → inactive', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const claims = { ...decodeJwt(await demoToken(server())), aud: 'another-api' };
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('a token without exp (realm\'s own key) → inactive', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const { exp: _exp, ...claims } = decodeJwt(await demoToken(server()));
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('a token of a client the realm does not know (realm\'s own key) → inactive', async () => {
      const { kid, alg, key } = await realmSigningKey(dbUrl());
      const claims = { ...decodeJwt(await demoToken(server())), azp: 'ghost-app', client_id: 'ghost-app' };
      assertInactive(await introspect(server(), await signToken(claims, key, { alg, kid })));
    });

    test('an unsigned token (alg none) with the realm\'s kid → inactive', async () => {
      const real = await demoToken(server());
      const kid = decodeProtectedHeader(real).kid!;
      const unsigned = `${base64url(JSON.stringify({ alg: 'none', kid, typ: 'JWT' }))}.${real.split('.')[1]}.`;
      assertInactive(await introspect(server(), unsigned));
    });

    test('an HMAC token (HS256) with the realm\'s kid → inactive', async () => {
      const real = await demoToken(server());
      const kid = decodeProtectedHeader(real).kid!;
      assertInactive(await introspect(server(), await signToken(decodeJwt(real), randomBytes(32), { alg: 'HS256', kid })));
    });

    test('an ES256 token signed by a generated key under the realm\'s kid → inactive', async () => {
      const { privateKey } = await generateKeyPair('ES256');
      const real = await demoToken(server());
      const kid = decodeProtectedHeader(real).kid!;
      assertInactive(await introspect(server(), await signToken(decodeJwt(real), privateKey, { alg: 'ES256', kid })));
    });

    test('a token carrying its own key in a jwk header, under the realm\'s kid → inactive (embedded keys are never trusted)', async () => {
      const { privateKey, publicKey } = await generateKeyPair('RS256');
      const real = await demoToken(server());
      const kid = decodeProtectedHeader(real).kid!;
      const token = await new SignJWT(decodeJwt(real))
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT', jwk: await exportJWK(publicKey) })
        .sign(privateKey);
      assertInactive(await introspect(server(), token));
    });

    // Client authentication and request errors.
    test('401 invalid_client: wrong client secret', async () => {
      const token = await demoToken(server());
      assertOAuthError(await introspect(server(), token, { clientId: reporting.clientId, secret: 'wrong-secret' }), 401, 'invalid_client');
    });

    test('401 invalid_client: unknown client', async () => {
      const token = await demoToken(server());
      assertOAuthError(await introspect(server(), token, { clientId: 'no-such-client', secret: 'whatever-secret' }), 401, 'invalid_client');
    });

    test('401 invalid_client: no client authentication at all', async () => {
      const token = await demoToken(server());
      assertOAuthError(await postForm(introspectUrl(server()), { token }), 401, 'invalid_client');
    });

    test('401 invalid_client with WWW-Authenticate: Basic realm="sandbox" when Basic was used with a wrong secret', async () => {
      const token = await demoToken(server());
      const response = await postForm(introspectUrl(server()), { token }, { authorization: basicAuth(reporting.clientId, 'wrong-secret') });
      assertOAuthError(response, 401, 'invalid_client');
      assert.equal(response.headers.get('www-authenticate'), 'Basic realm="sandbox"');
    });

    test('401 invalid_client: a client of another realm cannot introspect at this realm', async () => {
      const token = await demoToken(server());
      assertOAuthError(await introspect(server(), token, partner), 401, 'invalid_client');
    });

    test('400 invalid_request: missing token', async () => {
      const response = await postForm(introspectUrl(server()), { client_id: reporting.clientId, client_secret: reporting.secret });
      assertOAuthError(response, 400, 'invalid_request');
    });

    test('400 invalid_request: empty token', async () => {
      assertOAuthError(await introspect(server(), ''), 400, 'invalid_request');
    });

    test('400 invalid_request: the token parameter sent twice', async () => {
      const token = await demoToken(server());
      const body = new URLSearchParams({ token, client_id: reporting.clientId, client_secret: reporting.secret });
      body.append('token', token);
      assertOAuthError(await postForm(introspectUrl(server()), body.toString()), 400, 'invalid_request');
    });

    test('400 invalid_request: client_id sent twice', async () => {
      const token = await demoToken(server());
      const body = new URLSearchParams({ token, client_id: reporting.clientId, client_secret: reporting.secret });
      body.append('client_id', reporting.clientId);
      assertOAuthError(await postForm(introspectUrl(server()), body.toString()), 400, 'invalid_request');
    });

    test('400 invalid_request: Basic and client_secret in the form at once', async () => {
      const token = await demoToken(server());
      const response = await postForm(
        introspectUrl(server()),
        { token, client_secret: reporting.secret },
        { authorization: basicAuth(reporting.clientId, reporting.secret) },
      );
      assertOAuthError(response, 400, 'invalid_request');
    });

    test('400 invalid_request: a JSON body instead of a form', async () => {
      const token = await demoToken(server());
      const response = await fetch(introspectUrl(server()), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ token, client_id: reporting.clientId, client_secret: reporting.secret }),
      });
      assertOAuthError({ status: response.status, headers: response.headers, body: await response.json() }, 400, 'invalid_request');
    });

    test('404 with an OAuth-style error: unknown realm', async () => {
      const token = await demoToken(server());
      const response = await introspect(server(), token, reporting, 'no-such-realm');
      assert.equal(response.status, 404);
      assert.equal(typeof response.body.error, 'string');
      assert.equal(typeof response.body.error_description, 'string');
    });

    test('the introspecting client\'s secret and the token never appear in the server log', async () => {
      const token = await demoToken(server());
      await introspect(server(), token);
      await introspect(server(), token, { clientId: reporting.clientId, secret: 'wrong-secret-for-the-log' });
      const log = server().logLines.join('\n');
      assert.equal(log.includes(reporting.secret), false);
      assert.equal(log.includes('wrong-secret-for-the-log'), false);
      assert.equal(log.includes(token), false);
    });
  },
  { data: twoRealmsFile },
);

// ---------------------------------------------------------------------------------------------
// Realm not-before: `coregate realms revoke-tokens`
// ---------------------------------------------------------------------------------------------

describeEachStore('realm not-before (CLI realms revoke-tokens)', ({ server, dbUrl }) => {
  const state = {} as {
    treasuryBefore: string;
    branchBefore: string;
    activeBefore: boolean[];
    policyBefore: number;
    cliStartedAt: number;
    cliEndedAt: number;
    cli: CliResult;
  };

  before(async () => {
    const response = await tokenResponse(server(), treasury);
    state.treasuryBefore = response.body.access_token;
    state.policyBefore = response.body['not-before-policy'];
    state.branchBefore = await demoToken(server(), branch);
    state.activeBefore = [
      (await introspect(server(), state.treasuryBefore)).body.active,
      (await introspect(server(), state.branchBefore)).body.active,
    ];
    state.cliStartedAt = Date.now() / 1000;
    state.cli = await cli(['realms', 'revoke-tokens', '--realm', demo.realm, '--db', dbUrl(), '--json']);
    state.cliEndedAt = Date.now() / 1000;
  });

  const printed = () => {
    assert.equal(state.cli.code, 0, state.cli.stderr);
    return JSON.parse(state.cli.stdout) as { realm: string; notBefore: number };
  };

  test('before revocation the tokens were active and not-before-policy was 0', () => {
    assert.deepEqual(state.activeBefore, [true, true]);
    assert.equal(state.policyBefore, 0);
  });

  test('realms revoke-tokens --json prints {realm, notBefore} with notBefore in epoch seconds, now', () => {
    const output = printed();
    assert.deepEqual(Object.keys(output).sort(), ['notBefore', 'realm']);
    assert.equal(output.realm, demo.realm);
    assert.ok(Number.isInteger(output.notBefore));
    assert.ok(output.notBefore > state.cliStartedAt, `${output.notBefore} is not after the command started`);
    assert.ok(output.notBefore <= Math.floor(state.cliEndedAt) + 1, `${output.notBefore} is in the future`);
  });

  test('a token issued before revocation → active: false (every client\'s)', async () => {
    printed();
    assertInactive(await introspect(server(), state.treasuryBefore));
    assertInactive(await introspect(server(), state.branchBefore));
  });

  test('the token response\'s not-before-policy now equals the printed notBefore', async () => {
    const response = await tokenResponse(server(), treasury);
    assert.equal(response.status, 200);
    assert.equal(response.body['not-before-policy'], printed().notBefore);
  });

  test('a token issued after revocation is active, with iat not before notBefore', async () => {
    const token = await demoToken(server(), branch);
    const response = await introspect(server(), token);
    assert.equal(response.body.active, true);
    assert.ok(Number(response.body.iat) >= printed().notBefore);
    assert.ok(Number(response.body.exp) > Number(response.body.iat));
  });

  test('revoke-tokens on an unknown realm fails and names the realm', async () => {
    const result = await cli(['realms', 'revoke-tokens', '--realm', 'no-such-realm', '--db', dbUrl(), '--json']);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /no-such-realm/);
  });
});

// ---------------------------------------------------------------------------------------------
// Disabled client: `coregate clients disable`
// ---------------------------------------------------------------------------------------------

/**
 * The server's clock: its auth snapshot ages by it, so the suite moves it past authSnapshotMaxAgeMs
 * instead of sleeping that long. It starts at the real time, as the CLI (on the real clock) writes
 * what the server reads.
 */
const disabledClientClock = new FakeClock(Date.now());
describeEachStore('disabled client (CLI clients disable)', ({ server, dbUrl }) => {
  const state = {} as { branchToken: string; treasuryToken: string; activeBefore: boolean; cli: CliResult };

  before(async () => {
    state.branchToken = await demoToken(server(), branch);
    state.treasuryToken = await demoToken(server(), treasury);
    state.activeBefore = (await introspect(server(), state.branchToken)).body.active;
    state.cli = await cli(['clients', 'disable', '--realm', demo.realm, '--client-id', branch.clientId, '--db', dbUrl()]);
    // A disabled client may be honoured at the token endpoint for authSnapshotMaxAgeMs more.
    disabledClientClock.advance(authSnapshotMaxAgeMs);
  });

  test('clients disable succeeds and names the client', () => {
    assert.equal(state.cli.code, 0, state.cli.stderr);
    assert.match(state.cli.stdout, /branch-portal/);
    assert.equal(state.activeBefore, true);
  });

  test('its token requests get 401 invalid_client (client_secret_post)', async () => {
    const response = await tokenResponse(server(), branch);
    assertOAuthError(response, 401, 'invalid_client');
  });

  test('its token requests get 401 invalid_client (client_secret_basic)', async () => {
    const response = await postForm(server().tokenUrl(), { grant_type: 'client_credentials' }, { authorization: basicAuth(branch.clientId, branch.secret) });
    assertOAuthError(response, 401, 'invalid_client');
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="sandbox"');
  });

  test('the refusal does not tell a disabled client from a wrong secret', async () => {
    const disabled = await tokenResponse(server(), branch);
    const wrong = await tokenResponse(server(), { clientId: treasury.clientId, secret: 'wrong-secret' });
    assert.equal(disabled.body.error_description, wrong.body.error_description);
  });

  test('its earlier tokens introspect inactive', async () => {
    assertInactive(await introspect(server(), state.branchToken));
  });

  test('it cannot authenticate at the introspection endpoint', async () => {
    assertOAuthError(await introspect(server(), state.treasuryToken, branch), 401, 'invalid_client');
  });

  test('other clients are unaffected: their tokens stay active and they obtain new ones', async () => {
    assert.equal((await introspect(server(), state.treasuryToken)).body.active, true);
    assert.equal((await tokenResponse(server(), reporting)).status, 200);
  });

  test('clients enable: it obtains tokens again, and they are active', async () => {
    const result = await cli(['clients', 'enable', '--realm', demo.realm, '--client-id', branch.clientId, '--db', dbUrl()]);
    assert.equal(result.code, 0, result.stderr);
    const token = await demoToken(server(), branch);
    assert.equal((await introspect(server(), token)).body.active, true);
  });
}, { clock: disabledClientClock });
