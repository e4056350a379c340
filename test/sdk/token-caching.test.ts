/**
 * SDK token handling (docs/auth.md, "A client's secret and tokens"): one cached token per session,
 * reused while valid, renewed once when within the margin of its expiry (the margin capped at half
 * the token's lifetime), one shared request for concurrent callers on a cold cache, sessions that
 * never receive each other's token, and one renewal plus one repeat after a 401 (revoked tokens,
 * rotated keys). Token requests are counted at the server, from its "incoming request" log lines
 * for the token path; real HTTP against a started server, on each store.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';
import { CoregateApiError, CoregateClient, TokenProvider, type CoregateClientOptions, type TermDepositInitiationRequest } from '../../src/sdk/index.js';
import { runCli } from '../helpers/cli.js';
import { depositBody as jsonDepositBody } from '../helpers/bodies.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { demo, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { sleep } from '../helpers/wait.js';
import { embedded } from '../helpers/stores.js';

const { treasury } = demo;

/** A second realm whose tokens live 10 s (the data file's minimum): real expiry within a test. */
const shortRealm = 'short-lived';
const shortLifespanSeconds = 10;
const shortApp = { clientId: 'short-app', secret: 'short-app-secret-0123456789abcdef0123456789' };

const dataFile = (() => {
  const data = readDemoData<{ realms: unknown[] }>();
  data.realms.push({
    name: shortRealm,
    accessTokenLifespanSeconds: shortLifespanSeconds,
    audience: 'coregate-api',
    clients: [
      {
        clientId: shortApp.clientId,
        secret: shortApp.secret,
        scopes: ['termDeposit:initiate', 'termDeposit:retrieve', 'merchandisingLoan:execute'],
        technicalUser: 'svc-treasury',
        defaultWorkstation: 'WS-TREASURY-01',
      },
    ],
  });
  return writeTempDataFile(data, 'coregate-sdk-tokens-test-');
})();

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface LogEntry {
  msg?: string;
  req?: { method?: string; url?: string };
}

/** The server's "incoming request" log entries (what the server saw, not what the SDK says). */
function incomingRequests(server: TestServer): Array<{ method: string; url: string }> {
  const requests: Array<{ method: string; url: string }> = [];
  for (const line of server.logLines) {
    let entry: LogEntry;
    try {
      entry = JSON.parse(line) as LogEntry;
    } catch {
      continue;
    }
    if (entry.msg === 'incoming request' && entry.req?.url) requests.push({ method: entry.req.method ?? '', url: entry.req.url });
  }
  return requests;
}

/** Token requests the server received for a realm. */
function tokenRequests(server: TestServer, realm: string = demo.realm): number {
  const path = new URL(server.tokenUrl(realm)).pathname;
  return incomingRequests(server).filter((request) => request.method === 'POST' && request.url === path).length;
}

/** Business API requests the server received whose path starts with `prefix`. */
function businessRequests(server: TestServer, prefix: string): number {
  return incomingRequests(server).filter((request) => request.url.startsWith(prefix)).length;
}

function clientFor(server: TestServer, options: Partial<CoregateClientOptions> = {}): CoregateClient {
  return new CoregateClient({
    baseUrl: server.url,
    realm: demo.realm,
    clientId: treasury.clientId,
    clientSecret: treasury.secret,
    retry: { attempts: 1 },
    ...options,
  });
}

/** The shared deposit body, typed for the SDK. */
const depositBody = (amountValue?: number) => jsonDepositBody(amountValue) as TermDepositInitiationRequest;

/** Constitutes a deposit (with a client of its own) and answers its contract number. */
async function anyDeposit(server: TestServer): Promise<string> {
  const outcome = await clientFor(server).termDeposits.initiate(depositBody());
  assert.equal(outcome.status, 200);
  return outcome.result.termDepositAccount;
}

/** Wraps fetch to record the bearer token of every business API request the SDK sends. */
function recordingFetch(): { fetch: typeof fetch; bearers: Array<{ path: string; token: string; correlationId: string | null }> } {
  const bearers: Array<{ path: string; token: string; correlationId: string | null }> = [];
  const wrapped: typeof fetch = async (input, init) => {
    const headers = new Headers(init?.headers);
    const authorization = headers.get('authorization');
    if (authorization?.startsWith('Bearer ')) {
      bearers.push({ path: new URL(String(input)).pathname, token: authorization.slice('Bearer '.length), correlationId: headers.get('x-correlation-id') });
    }
    return fetch(input, init);
  };
  return { fetch: wrapped, bearers };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/**
 * Runs the operator CLI (`coregate ...`), the compiled one as the CLI tests do (from the sources
 * through tsx, each run cost a second more of CPU to transpile); rejects on a non-zero exit.
 */
async function coregateCli(args: string[]): Promise<string> {
  const result = await runCli(args, { timeoutMs: 30_000 });
  if (result.code !== 0) throw new Error(`coregate ${args.join(' ')}: exit ${result.code}\n${result.stderr}`);
  return result.stdout;
}

/**
 * Waits until the wall clock is in a later second than `iat`, so a not-before set now is > iat.
 * Not background work: the CLI is another process and sets the not-before from the wall clock; a
 * token's iat is at least the realm's previous not-before (a wall-clock second), so the instance's
 * fake clock cannot move it back.
 */
async function afterIssuedSecond(token: string): Promise<void> {
  const iat = Number(decodeJwt(token).iat);
  while (nowSeconds() <= iat) await sleep(50);
}

/** The caching suite's instance clock: the test moves it (and the SDK's) to a token's renewal time. */
const cachingClock = new FakeClock(Date.now());
/**
 * The 401 suite's instance clock, behind the wall clock the CLI reads (its tokens' iat precede the
 * not-before the CLI sets); the test moves it past the auth snapshot's age.
 */
const renewalClock = new FakeClock(Date.now() - 10_000);
/**
 * Sets the instance's clock 10 s behind the wall clock (unless it is further on already): the
 * tokens it issues precede the not-before the CLI sets next, and the tokens it issues at that
 * not-before are less than the 30 s of allowed skew ahead of it.
 */
function renewalClockBehindWallClock(): void {
  renewalClock.set(Math.max(renewalClock.now(), Date.now() - 10_000));
}

// =============================================================================================
// Caching against the server (real time)
// =============================================================================================

describeEachStore(
  'SDK token caching (counted at the server)',
  ({ server }) => {
    test('200 calls within a token\'s lifetime cost one token request', async () => {
      const id = await anyDeposit(server());
      const client = clientFor(server());
      const tokensBefore = tokenRequests(server());
      const retrievesBefore = businessRequests(server(), `/v1/term-deposits/${id}/retrieve`);
      for (let call = 0; call < 200; call += 1) {
        const { result: deposit } = await client.termDeposits.retrieve(id);
        assert.equal(deposit.termDepositAccount, id);
      }
      assert.equal(businessRequests(server(), `/v1/term-deposits/${id}/retrieve`) - retrievesBefore, 200, 'every call reached the server');
      assert.equal(tokenRequests(server()) - tokensBefore, 1);
    });

    test('near its expiry (within the 2 s refresh margin of a 10 s token), exactly one more token request; then the new token is reused', async () => {
      const id = await anyDeposit(server());
      const marginSeconds = 2;
      const client = clientFor(server(), { realm: shortRealm, clientId: shortApp.clientId, clientSecret: shortApp.secret, tokenRefreshMarginSeconds: marginSeconds, now: cachingClock.now });
      const before = tokenRequests(server(), shortRealm);
      const first = await client.token();
      // The SDK asked for the token before this instant: its renewal time is at most 8 s from here.
      const requestedAtMs = cachingClock.now();
      assert.equal(Number(decodeJwt(first).exp) - Number(decodeJwt(first).iat), shortLifespanSeconds);
      for (let call = 0; call < 20; call += 1) await client.termDeposits.retrieve(id);
      assert.equal(await client.token(), first);
      assert.ok(cachingClock.now() - requestedAtMs < (shortLifespanSeconds - marginSeconds) * 1000 - 500, 'the calls ran well within the token\'s cached life');
      assert.equal(tokenRequests(server(), shortRealm) - before, 1);

      // Past expiry minus the margin: the next call renews, once.
      cachingClock.advance(requestedAtMs + (shortLifespanSeconds - marginSeconds) * 1000 + 50 - cachingClock.now());
      assert.ok(cachingClock.now() < Number(decodeJwt(first).exp) * 1000, 'the old token has not expired yet: the renewal happens within the margin');
      for (let call = 0; call < 20; call += 1) await client.termDeposits.retrieve(id);
      const second = await client.token();
      assert.notEqual(second, first);
      assert.ok(Number(decodeJwt(second).iat) > Number(decodeJwt(first).iat));
      assert.equal(tokenRequests(server(), shortRealm) - before, 2);
    });

    test('50 concurrent calls on a cold cache cost one token request', async () => {
      const id = await anyDeposit(server());
      const client = clientFor(server());
      const before = tokenRequests(server());
      const deposits = await Promise.all(Array.from({ length: 50 }, () => client.termDeposits.retrieve(id)));
      assert.equal(deposits.length, 50);
      for (const deposit of deposits) assert.equal(deposit.result.termDepositAccount, id);
      assert.equal(tokenRequests(server()) - before, 1);
    });

    test('50 concurrent token() calls on a cold cache share one request and receive the same token', async () => {
      const client = clientFor(server());
      const before = tokenRequests(server());
      const tokens = await Promise.all(Array.from({ length: 50 }, () => client.token()));
      assert.equal(new Set(tokens).size, 1);
      assert.equal(tokenRequests(server()) - before, 1);
    });

    test('session isolation: a user session and the technical user never receive each other\'s token (claims and audit)', async () => {
      const recording = recordingFetch();
      const client = clientFor(server(), { fetch: recording.fetch });
      const jdoe = client.session({ username: 'jdoe', workstation: 'WS-BRANCH-07' });
      const before = tokenRequests(server());

      // Interleaved, concurrent executions of both sessions.
      const calls = Array.from({ length: 10 }, (_, index) => {
        const correlationId = randomUUID();
        const session = index % 2 === 0 ? jdoe : client;
        const expected = index % 2 === 0 ? 'jdoe' : 'svc-treasury';
        return session.termDeposits.initiate(depositBody(), { correlationId }).then((outcome) => ({ outcome, correlationId, expected }));
      });
      const results = await Promise.all(calls);
      assert.equal(tokenRequests(server()) - before, 2, 'one token per session');

      // What the server received on each call: the session's own token.
      for (const { outcome, correlationId, expected } of results) {
        assert.equal(outcome.status, 200);
        const sent = recording.bearers.filter((entry) => entry.correlationId === correlationId);
        assert.equal(sent.length, 1);
        const claims = decodeJwt(sent[0]!.token);
        assert.equal(claims.backbone_user, expected);
        assert.equal(claims.workstation, expected === 'jdoe' ? 'WS-BRANCH-07' : 'WS-TREASURY-01');
      }
      // And what the server recorded: each execution audited under its session's user.
      const audits = await server()
        .coregate.store.db.selectFrom('audit_records')
        .select(['correlation_id', 'backbone_user', 'workstation'])
        .where('correlation_id', 'in', results.map((result) => result.correlationId))
        .execute();
      assert.equal(audits.length, results.length);
      for (const audit of audits) {
        const expected = results.find((result) => result.correlationId === audit.correlation_id)?.expected;
        assert.equal(audit.backbone_user, expected);
        assert.equal(audit.workstation, expected === 'jdoe' ? 'WS-BRANCH-07' : 'WS-TREASURY-01');
      }

      // token(identity) answers each session's cached token, without a new request.
      const jdoeToken = await client.token({ username: 'jdoe', workstation: 'WS-BRANCH-07' });
      const technicalToken = await client.token();
      assert.notEqual(jdoeToken, technicalToken);
      assert.equal(decodeJwt(jdoeToken).backbone_user, 'jdoe');
      assert.equal(decodeJwt(technicalToken).backbone_user, 'svc-treasury');
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('session isolation: the same user on another workstation gets a token of its own', async () => {
      const client = clientFor(server());
      const before = tokenRequests(server());
      const atBranch = await client.token({ username: 'jdoe', workstation: 'WS-BRANCH-07' });
      const atTreasury = await client.token({ username: 'jdoe', workstation: 'WS-TREASURY-01' });
      assert.notEqual(atBranch, atTreasury);
      assert.equal(decodeJwt(atBranch).workstation, 'WS-BRANCH-07');
      assert.equal(decodeJwt(atTreasury).workstation, 'WS-TREASURY-01');
      assert.equal(tokenRequests(server()) - before, 2);
      assert.equal(await client.token({ username: 'jdoe', workstation: 'WS-BRANCH-07' }), atBranch);
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('session isolation: two client instances never share a cache (each requests its own token)', async () => {
      const before = tokenRequests(server());
      const first = await clientFor(server()).token();
      const second = await clientFor(server()).token();
      assert.notEqual(first, second);
      assert.equal(tokenRequests(server()) - before, 2);
    });
  },
  { data: dataFile, clock: cachingClock },
);

// =============================================================================================
// Renewal margin, driven by TokenProvider's clock (the server still counts the requests)
// =============================================================================================

describeEachStore(
  'SDK token renewal margin (simulated clock)',
  ({ server }) => {
    /** The demo realm's tokens live 300 s. */
    const lifetimeMs = 300_000;

    function providerAt(clock: { now: number }, refreshMarginSeconds?: number): TokenProvider {
      return new TokenProvider({
        tokenUrl: server().tokenUrl(),
        clientId: treasury.clientId,
        clientSecret: treasury.secret,
        now: () => clock.now,
        ...(refreshMarginSeconds === undefined ? {} : { refreshMarginSeconds }),
      });
    }

    test('a token is reused until `margin` seconds before its expiry, then renewed with exactly one request', async () => {
      const clock = { now: 1_000_000 };
      const tokens = providerAt(clock, 5);
      const before = tokenRequests(server());
      const first = await tokens.token();
      assert.equal(Number(decodeJwt(first).exp) - Number(decodeJwt(first).iat), lifetimeMs / 1000);

      clock.now += lifetimeMs - 5_000 - 1;
      assert.equal(await tokens.token(), first, 'one millisecond before the margin: still cached');
      assert.equal(tokenRequests(server()) - before, 1);

      clock.now += 1;
      const second = await tokens.token();
      assert.notEqual(second, first, 'within the margin: renewed');
      assert.equal(tokenRequests(server()) - before, 2);
      for (let call = 0; call < 10; call += 1) assert.equal(await tokens.token(), second);
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('the default margin is 5 s', async () => {
      const clock = { now: 5_000_000 };
      const tokens = providerAt(clock);
      const before = tokenRequests(server());
      const first = await tokens.token();
      clock.now += lifetimeMs - 5_001;
      assert.equal(await tokens.token(), first);
      clock.now += 1;
      assert.notEqual(await tokens.token(), first);
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('an expired token is never reused: long after its expiry, one request renews it', async () => {
      const clock = { now: 2_000_000 };
      const tokens = providerAt(clock, 5);
      const before = tokenRequests(server());
      const first = await tokens.token();
      clock.now += 10 * lifetimeMs;
      const renewed = await Promise.all(Array.from({ length: 20 }, () => tokens.token()));
      assert.equal(new Set(renewed).size, 1);
      assert.notEqual(renewed[0], first);
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('the margin is capped at half the lifetime: a margin larger than the lifetime does not renew on every call', async () => {
      const clock = { now: 3_000_000 };
      const tokens = providerAt(clock, 3_600);
      const before = tokenRequests(server());
      const first = await tokens.token();
      for (let call = 0; call < 20; call += 1) assert.equal(await tokens.token(), first);
      clock.now += lifetimeMs / 2 - 1;
      assert.equal(await tokens.token(), first, 'just before half the lifetime: still cached');
      assert.equal(tokenRequests(server()) - before, 1);
      clock.now += 1;
      const second = await tokens.token();
      assert.notEqual(second, first, 'at half the lifetime: renewed');
      for (let call = 0; call < 20; call += 1) assert.equal(await tokens.token(), second);
      assert.equal(tokenRequests(server()) - before, 2);
    });

    test('a zero margin renews exactly at expiry', async () => {
      const clock = { now: 4_000_000 };
      const tokens = providerAt(clock, 0);
      const before = tokenRequests(server());
      const first = await tokens.token();
      clock.now += lifetimeMs - 1;
      assert.equal(await tokens.token(), first);
      clock.now += 1;
      assert.notEqual(await tokens.token(), first);
      assert.equal(tokenRequests(server()) - before, 2);
    });
  },
);

// =============================================================================================
// 401: renew once and repeat once
// =============================================================================================

describeEachStore('SDK token renewal after 401', ({ server, dbUrl }) => {
  test('after `coregate realms revoke-tokens`, the SDK renews the token and repeats the call once: 200, one execution', async () => {
    renewalClockBehindWallClock();
    const recording = recordingFetch();
    const client = clientFor(server(), { fetch: recording.fetch });
    const oldToken = await client.token();
    assert.equal((await client.termDeposits.initiate(depositBody())).status, 200);
    await afterIssuedSecond(oldToken);
    await coregateCli(['realms', 'revoke-tokens', '--realm', demo.realm, '--db', dbUrl(), '--json']);
    // The API sees the realm's new not-before within authSnapshotMaxAgeMs (docs/deployment.md,
    // "What an instance keeps in memory").
    renewalClock.advance(authSnapshotMaxAgeMs);

    const tokensBefore = tokenRequests(server());
    const initiationsBefore = businessRequests(server(), '/v1/term-deposits/initiate');
    const contractsBefore = (await embedded(server().coregate.store.db).selectFrom('term_deposits').select('contract_number').execute()).length;
    const correlationId = randomUUID();
    const outcome = await client.termDeposits.initiate(depositBody(), { correlationId });
    assert.equal(outcome.status, 200);
    assert.equal(tokenRequests(server()) - tokensBefore, 1, 'one renewal');
    assert.equal(businessRequests(server(), '/v1/term-deposits/initiate') - initiationsBefore, 2, 'the refused call and its one repeat');
    const contractsAfter = (await embedded(server().coregate.store.db).selectFrom('term_deposits').select('contract_number').execute()).length;
    assert.equal(contractsAfter, contractsBefore + 1, 'executed once');

    // The repeat kept the correlation id and carried the new token.
    const sent = recording.bearers.filter((entry) => entry.correlationId === correlationId);
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.token, oldToken);
    assert.notEqual(sent[1]!.token, oldToken);
    assert.equal(await client.token(), sent[1]!.token, 'the renewed token is the cached one');
    assert.equal(tokenRequests(server()) - tokensBefore, 1);
  });

  test('after a key rotation plus a realm not-before, a read renews the token (signed with the new key) and succeeds', async () => {
    renewalClockBehindWallClock();
    const recording = recordingFetch();
    const client = clientFor(server(), { fetch: recording.fetch });
    const id = await anyDeposit(server());
    const oldToken = await client.token();
    await client.termDeposits.retrieve(id);
    await afterIssuedSecond(oldToken);
    const rotated = JSON.parse(await coregateCli(['keys', 'rotate', '--realm', demo.realm, '--db', dbUrl(), '--json'])) as { kid: string };
    await coregateCli(['realms', 'revoke-tokens', '--realm', demo.realm, '--db', dbUrl(), '--json']);
    // The API sees the realm's new not-before within authSnapshotMaxAgeMs (docs/deployment.md,
    // "What an instance keeps in memory").
    renewalClock.advance(authSnapshotMaxAgeMs);

    const tokensBefore = tokenRequests(server());
    const correlationId = randomUUID();
    const { result: deposit } = await client.termDeposits.retrieve(id, { correlationId });
    assert.equal(deposit.termDepositAccount, id);
    assert.equal(tokenRequests(server()) - tokensBefore, 1);
    const sent = recording.bearers.filter((entry) => entry.correlationId === correlationId);
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.token, oldToken);
    assert.equal(decodeProtectedHeader(sent[1]!.token).kid, rotated.kid);
  });

  test('a 401 that persists after the renewal is not retried again: one renewal, two requests, then CoregateApiError 401', async () => {
    // Every business request carries a broken signature: the server refuses each with 401.
    const forged: typeof fetch = (input, init) => {
      const headers = new Headers(init?.headers);
      const authorization = headers.get('authorization');
      if (authorization) headers.set('authorization', `${authorization.slice(0, -4)}AAAA`);
      return fetch(input, { ...init, headers });
    };
    const id = await anyDeposit(server());
    const client = clientFor(server(), { fetch: forged, retry: { attempts: 3, baseDelayMs: 1 } });
    await client.token();
    const tokensBefore = tokenRequests(server());
    const retrievesBefore = businessRequests(server(), `/v1/term-deposits/${id}/retrieve`);
    await assert.rejects(client.termDeposits.retrieve(id), (error: unknown) => {
      assert.ok(error instanceof CoregateApiError, String(error));
      assert.equal(error.status, 401);
      assert.equal(error.reason, 'UNAUTHORIZED');
      return true;
    });
    assert.equal(tokenRequests(server()) - tokensBefore, 1, 'renewed once');
    assert.equal(businessRequests(server(), `/v1/term-deposits/${id}/retrieve`) - retrievesBefore, 2, 'repeated once');
  });
}, { clock: renewalClock });
