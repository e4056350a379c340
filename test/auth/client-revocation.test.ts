/**
 * Client revocation (docs/auth.md, "Client revocation"): disabling a client, rotating its secret,
 * replacing its keys and `coregate clients revoke-tokens` (or the operator API's
 * `POST /operator/v1/clients/{realm}/{clientId}/revoke-tokens`) cut off the tokens the client
 * already holds — the business API answers 401 invalid_token, the operator API 401, introspection
 * `{"active": false}` — within the auth snapshot's second on every instance, and leave the realm's
 * other clients alone. Enabling the client again does not bring its old tokens back; the tokens
 * it obtains afterwards work at once.
 *
 * The instances run on a FakeClock: their auth snapshots age by it, so a test moves it past
 * authSnapshotMaxAgeMs instead of sleeping.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, exportJWK } from 'jose';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { tempDirectory } from '../helpers/data-files.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { clientAssertion, keyPair, type KeyPair } from '../helpers/fapi.js';
import { initiatePath, send, type HttpResult } from '../helpers/http.js';
import { demo, demoDataFile, demoToken, postForm, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

type Credentials = { clientId: string; secret: string };

/**
 * The CLI sets a client's not-before from the wall clock (the first whole second after it), the
 * instances issue and check tokens on their FakeClock: the clock is kept this far behind the wall
 * clock, so that a token an instance issued before a CLI revocation has an earlier `iat` than the
 * not-before, and one it issues at that not-before is well within the 30 s of skew allowed ahead
 * of its now.
 */
const wallClockLeadMs = 15_000;

/** Moves `clock` up to `wallClockLeadMs` behind the wall clock, unless it is further on already (it only moves forward). */
function behindWallClock(clock: FakeClock): void {
  clock.set(Math.max(clock.now(), Date.now() - wallClockLeadMs));
  assert.ok(clock.now() <= Date.now(), 'the instances\' clock is not ahead of the CLI\'s');
}

function cli(args: string[]) {
  return runCli(args, { timeoutMs: 0 });
}

async function succeeded(args: string[]): Promise<string> {
  const result = await cli(args);
  assert.equal(result.code, 0, `coregate ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

const scopes = ['termDeposit:initiate', 'termDeposit:retrieve', 'coregate:operator'];

/** A new secret client of the demo realm, with the business API's scopes and the operator API's. */
async function newSecretClient(dbUrl: string, prefix: string): Promise<Credentials> {
  const clientId = `${prefix}-${randomUUID().slice(0, 8)}`;
  const printed = JSON.parse(await succeeded(['clients', 'create', '--realm', demo.realm, '--client-id', clientId, '--scopes', ...scopes, '--db', dbUrl, '--json'])) as { clientSecret: string };
  return { clientId, secret: printed.clientSecret };
}

/** A JWK set file of `key`'s public half, for `--jwks`. */
function jwksFile(key: KeyPair): string {
  const file = join(tempDirectory('coregate-revocation-'), 'keys.json');
  writeFileSync(file, JSON.stringify({ keys: [key.publicJwk] }));
  return file;
}

/** What a token is answered everywhere it is used: the business API's retrieve and initiate, the operator API, introspection. */
interface Uses {
  retrieve: HttpResult;
  initiate: HttpResult;
  operator: HttpResult;
  introspection: HttpResult;
}

/** The demo realm's calls of one instance. */
function callsOf(server: () => TestServer, deposit: () => string) {
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  return {
    async use(token: string): Promise<Uses> {
      const s = server();
      const retrieve = await send(`${s.url}/v1/term-deposits/${deposit()}/retrieve`, { headers: bearer(token) });
      const initiate = await send(`${s.url}${initiatePath}`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
        body: JSON.stringify(depositBody()),
      });
      const operator = await send(`${s.url}/operator/v1/session`, { headers: bearer(token) });
      const introspection = await postForm(`${s.realmUrl()}/protocol/openid-connect/token/introspect`, { token, client_id: demo.reporting.clientId, client_secret: demo.reporting.secret });
      return { retrieve, initiate, operator, introspection };
    },
  };
}

/** The token passes everywhere; a demo client's (`operatorScope: false`) gets the operator API's 403 for its scope, not a 401. */
function assertWorks(uses: Uses, what: string, { operatorScope = true } = {}): void {
  assert.equal(uses.retrieve.status, 200, `${what}: retrieve ${JSON.stringify(uses.retrieve.body)}`);
  assert.equal(uses.initiate.status, 200, `${what}: initiate ${JSON.stringify(uses.initiate.body)}`);
  assert.equal(uses.operator.status, operatorScope ? 200 : 403, `${what}: operator API ${JSON.stringify(uses.operator.body)}`);
  assert.equal(uses.introspection.body.active, true, `${what}: introspection ${JSON.stringify(uses.introspection.body)}`);
}

/** Cut off: 401 invalid_token at the business API, 401 at the operator API, `{"active": false}` at introspection. */
function assertCutOff(uses: Uses, what: string): void {
  for (const [name, answer] of [['retrieve', uses.retrieve], ['initiate', uses.initiate]] as const) {
    assert.equal(answer.status, 401, `${what}: ${name} ${JSON.stringify(answer.body)}`);
    assert.match(answer.headers.get('www-authenticate') ?? '', /error="invalid_token"/, `${what}: ${name}`);
  }
  assert.equal(uses.operator.status, 401, `${what}: operator API ${JSON.stringify(uses.operator.body)}`);
  assert.match(uses.operator.headers.get('www-authenticate') ?? '', /error="invalid_token"/, `${what}: operator API`);
  assert.equal(uses.introspection.status, 200);
  assert.deepEqual(uses.introspection.body, { active: false }, `${what}: introspection`);
}

/** A token of a private_key_jwt client, its assertion signed with `key` at the instance's time. */
async function keyedToken(server: TestServer, clock: FakeClock, clientId: string, key: KeyPair): Promise<string> {
  const assertion = await clientAssertion(server.realmUrl(), key, { iss: clientId, sub: clientId, nowSeconds: Math.floor(clock.now() / 1000) });
  const response = await postForm(server.tokenUrl(), {
    grant_type: 'client_credentials',
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  return response.body.access_token as string;
}

/** A term deposit of the demo realm, for the retrieves. */
async function someDeposit(server: TestServer): Promise<string> {
  const answer = await send(`${server.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${await demoToken(server)}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
    body: JSON.stringify(depositBody()),
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.termDepositAccount as string;
}

// =============================================================================================
// One instance: every way an operator revokes a client
// =============================================================================================

for (const target of storeTargets) {
  /**
   * This suite's instance clock, its own: each suite moves it by a few seconds in all, which keeps
   * it behind the wall clock however fast the suite runs.
   */
  const clock = new FakeClock(Date.now() - wallClockLeadMs);
  describe(`client revocation (docs/auth.md, "Client revocation") [${target.name}]`, { skip: target.skip }, () => {
    let running: TestServer | undefined;
    let url: string | undefined;
    let drop: (() => Promise<void>) | undefined;
    before(async () => {
      const created = await target.create();
      url = created.url;
      drop = created.drop;
      running = await startTestServer({ db: created.url, clock, flags: { operatorApi: true }, deployment: 'embedded' });
    });
    after(async () => {
      await running?.close();
      await drop?.();
    });
    const server = () => running ?? assert.fail('server not started');
    const dbUrl = () => url ?? assert.fail('store not created');
    let deposit: string | undefined;
    before(async () => {
      behindWallClock(clock);
      deposit = await someDeposit(server());
    });
    const { use } = callsOf(server, () => deposit ?? assert.fail('no deposit'));
    const token = (client: Credentials) => demoToken(server(), client);

    test('clients disable: the tokens the client holds are refused within the auth snapshot\'s second (retrieve and initiate 401 invalid_token, operator API 401, introspection inactive); the realm\'s other clients keep theirs', async () => {
      const [disabled, other] = [await newSecretClient(dbUrl(), 'disabled-app'), await newSecretClient(dbUrl(), 'other-app')];
      const used = await token(disabled);
      const unused = await token(disabled);
      const othersToken = await token(other);
      assertWorks(await use(used), 'before the disable');
      assertWorks(await use(othersToken), 'the other client\'s, before');
      behindWallClock(clock);
      await succeeded(['clients', 'disable', '--realm', demo.realm, '--client-id', disabled.clientId, '--db', dbUrl()]);
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(used), 'a token used before the disable');
      assertCutOff(await use(unused), 'a token obtained before the disable, first used after');
      assertWorks(await use(othersToken), 'the other client\'s token');
      assert.match((await use(used)).retrieve.body.message, /client/i, 'the refusal says the client refused it');
    });

    test('clients enable does not bring the old tokens back; a token obtained after it works at once', async () => {
      const client = await newSecretClient(dbUrl(), 'reenabled-app');
      const old = await token(client);
      assertWorks(await use(old), 'before the disable');
      behindWallClock(clock);
      await succeeded(['clients', 'disable', '--realm', demo.realm, '--client-id', client.clientId, '--db', dbUrl()]);
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(old), 'while disabled');
      await succeeded(['clients', 'enable', '--realm', demo.realm, '--client-id', client.clientId, '--db', dbUrl()]);
      const fresh = await token(client);
      assertWorks(await use(fresh), 'a token obtained after the enable, at once');
      assertCutOff(await use(old), 'a token obtained before the disable, after the enable');
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(old), 'a token obtained before the disable, a second after the enable');
      assertWorks(await use(fresh), 'the new token, a second on');
    });

    test('clients rotate-secret: the tokens obtained with the old secret are refused within the second; a token of the new secret works at once', async () => {
      const client = await newSecretClient(dbUrl(), 'rotated-app');
      const old = await token(client);
      assertWorks(await use(old), 'before the rotation');
      behindWallClock(clock);
      const printed = JSON.parse(await succeeded(['clients', 'rotate-secret', '--realm', demo.realm, '--client-id', client.clientId, '--db', dbUrl(), '--json'])) as { clientSecret: string };
      const fresh = await token({ clientId: client.clientId, secret: printed.clientSecret });
      assertWorks(await use(fresh), 'a token of the new secret, at once');
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(old), 'a token of the old secret');
      assertWorks(await use(fresh), 'a token of the new secret, a second on');
    });

    test('clients set-keys: a private_key_jwt client\'s tokens obtained with its old keys are refused within the second; a token signed with its new key works at once', async () => {
      const clientId = `keyed-app-${randomUUID().slice(0, 8)}`;
      const [oldKey, newKey] = [await keyPair('ES256'), await keyPair('ES256')];
      await succeeded(['clients', 'create', '--realm', demo.realm, '--client-id', clientId, '--scopes', ...scopes, '--auth-method', 'private_key_jwt', '--jwks', jwksFile(oldKey), '--db', dbUrl()]);
      const old = await keyedToken(server(), clock, clientId, oldKey);
      assertWorks(await use(old), 'before the key change');
      behindWallClock(clock);
      const printed = JSON.parse(await succeeded(['clients', 'set-keys', '--realm', demo.realm, '--client-id', clientId, '--jwks', jwksFile(newKey), '--db', dbUrl(), '--json'])) as { kids: string[]; tokensNotBefore: number };
      assert.deepEqual(printed.kids, [newKey.publicJwk.kid]);
      assert.ok(Number(decodeJwt(old).iat) < printed.tokensNotBefore, 'the old token was issued before the printed not-before');
      const fresh = await keyedToken(server(), clock, clientId, newKey);
      assertWorks(await use(fresh), 'a token of the new key, at once');
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(old), 'a token of the old key');
      assertWorks(await use(fresh), 'a token of the new key, a second on');
      const refused = await postForm(server().tokenUrl(), {
        grant_type: 'client_credentials',
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: await clientAssertion(server().realmUrl(), oldKey, { iss: clientId, sub: clientId, nowSeconds: Math.floor(clock.now() / 1000) }),
      });
      assert.equal(refused.status, 401, 'the old key no longer obtains tokens');
    });

    test('clients set-keys refuses a client without keys, an unknown client and a private key, and changes nothing', async () => {
      const secretClient = await newSecretClient(dbUrl(), 'secret-not-keys');
      const key = await keyPair('ES256');
      const file = jwksFile(key);
      const clientId = `keyed-kept-${randomUUID().slice(0, 8)}`;
      await succeeded(['clients', 'create', '--realm', demo.realm, '--client-id', clientId, '--scopes', ...scopes, '--auth-method', 'private_key_jwt', '--jwks', file, '--db', dbUrl()]);
      const keyedToken_ = await keyedToken(server(), clock, clientId, key);
      const privateFile = join(tempDirectory('coregate-revocation-'), 'private.json');
      writeFileSync(privateFile, JSON.stringify({ keys: [{ ...(await exportJWK(key.privateKey)), kid: 'private' }] }));
      const privateKey = await cli(['clients', 'set-keys', '--realm', demo.realm, '--client-id', clientId, '--jwks', privateFile, '--db', dbUrl()]);
      assert.notEqual(privateKey.code, 0);
      assert.match(privateKey.stderr, /private key/);
      const notKeyed = await cli(['clients', 'set-keys', '--realm', demo.realm, '--client-id', secretClient.clientId, '--jwks', file, '--db', dbUrl()]);
      assert.notEqual(notKeyed.code, 0);
      assert.match(notKeyed.stderr, /private_key_jwt/);
      assert.match(notKeyed.stderr, /rotate-secret/);
      const unknown = await cli(['clients', 'set-keys', '--realm', demo.realm, '--client-id', 'no-such-client', '--jwks', file, '--db', dbUrl()]);
      assert.notEqual(unknown.code, 0);
      assert.match(unknown.stderr, /no-such-client/);
      clock.advance(authSnapshotMaxAgeMs);
      assertWorks(await use(await token(secretClient)), 'the secret client');
      assertWorks(await use(keyedToken_), 'the keyed client\'s token, after its refused key change');
    });

    test('clients revoke-tokens: that client\'s tokens are refused within the second, the realm\'s other clients\' still pass, and a token obtained after it works', async () => {
      const [revoked, other] = [await newSecretClient(dbUrl(), 'revoked-app'), await newSecretClient(dbUrl(), 'kept-app')];
      const old = await token(revoked);
      const othersToken = await token(other);
      assertWorks(await use(old), 'before the revocation');
      behindWallClock(clock);
      const startedSeconds = Date.now() / 1000;
      const printed = JSON.parse(await succeeded(['clients', 'revoke-tokens', '--realm', demo.realm, '--client-id', revoked.clientId, '--db', dbUrl(), '--json'])) as { realm: string; clientId: string; tokensNotBefore: number };
      assert.deepEqual(Object.keys(printed).sort(), ['clientId', 'realm', 'tokensNotBefore']);
      assert.equal(printed.clientId, revoked.clientId);
      assert.ok(Number.isInteger(printed.tokensNotBefore) && printed.tokensNotBefore > startedSeconds, 'the first whole second after the command ran');
      clock.advance(authSnapshotMaxAgeMs);
      assertCutOff(await use(old), 'the revoked client\'s token');
      assertWorks(await use(othersToken), 'the other client\'s token');
      assertWorks(await use(await demoToken(server(), demo.treasury)), 'a demo client\'s new token', { operatorScope: false });
      const fresh = await token(revoked);
      assert.ok(Number(decodeJwt(fresh).iat) >= printed.tokensNotBefore, 'issued at or after the client\'s not-before');
      assertWorks(await use(fresh), 'the revoked client\'s token obtained after the revocation');
      const listed = JSON.parse(await succeeded(['clients', 'list', '--realm', demo.realm, '--db', dbUrl(), '--json'])) as Array<{ clientId: string; tokensNotBefore: number }>;
      assert.equal(listed.find((row) => row.clientId === revoked.clientId)?.tokensNotBefore, printed.tokensNotBefore);
      assert.equal(listed.find((row) => row.clientId === other.clientId)?.tokensNotBefore, 0);
    });

    test('clients revoke-tokens on an unknown client or realm fails and names it', async () => {
      const unknownClient = await cli(['clients', 'revoke-tokens', '--realm', demo.realm, '--client-id', 'no-such-client', '--db', dbUrl()]);
      assert.notEqual(unknownClient.code, 0);
      assert.match(unknownClient.stderr, /no-such-client/);
      const unknownRealm = await cli(['clients', 'revoke-tokens', '--realm', 'no-such-realm', '--client-id', demo.treasury.clientId, '--db', dbUrl()]);
      assert.notEqual(unknownRealm.code, 0);
      assert.match(unknownRealm.stderr, /no-such-realm/);
    });

    test('POST /operator/v1/clients/{realm}/{clientId}/revoke-tokens: that client\'s tokens are refused at once on this instance, a token it obtains right after works, the realm\'s other clients keep theirs', async () => {
      const [operator, revoked, other] = [await newSecretClient(dbUrl(), 'ops-app'), await newSecretClient(dbUrl(), 'api-revoked-app'), await newSecretClient(dbUrl(), 'api-kept-app')];
      const old = await token(revoked);
      const othersToken = await token(other);
      assertWorks(await use(old), 'before the revocation');
      const answer = await send(`${server().url}/operator/v1/clients/${demo.realm}/${revoked.clientId}/revoke-tokens`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await token(operator)}`, 'content-type': 'application/json' },
        body: '{}',
      });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, { realm: demo.realm, clientId: revoked.clientId, tokensNotBefore: Math.floor(clock.now() / 1000) + 1 });
      // No clock moved: the instance that revoked reads the client afresh.
      assertCutOff(await use(old), 'the revoked client\'s token');
      const fresh = await token(revoked);
      assert.equal(decodeJwt(fresh).iat, answer.body.tokensNotBefore, 'issued at the client\'s not-before, within the revocation\'s second');
      assertWorks(await use(fresh), 'its token obtained right after the revocation');
      assertWorks(await use(othersToken), 'the other client\'s token');
    });

    test('the operator API\'s revoke-tokens: 404 for an unknown client or realm, 415 without a JSON body, 403 without the operator scope, 401 without credentials', async () => {
      const operatorToken = await token(await newSecretClient(dbUrl(), 'ops-checks-app'));
      const post = (path: string, headers: Record<string, string>, body = '{}') => send(`${server().url}/operator/v1/clients/${path}/revoke-tokens`, { method: 'POST', headers, body });
      const json = { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' };
      const unknownClient = await post(`${demo.realm}/no-such-client`, json);
      assert.equal(unknownClient.status, 404);
      assert.equal(unknownClient.body.reason, 'NOT_FOUND');
      assert.match(unknownClient.body.message, /no-such-client/);
      const unknownRealm = await post(`no-such-realm/${demo.treasury.clientId}`, json);
      assert.equal(unknownRealm.status, 404);
      assert.match(unknownRealm.body.message, /no-such-realm/);
      assert.equal((await post(`${demo.realm}/${demo.treasury.clientId}`, { authorization: `Bearer ${operatorToken}`, 'content-type': 'text/plain' })).status, 415);
      assert.equal((await post(`${demo.realm}/${demo.treasury.clientId}`, json, '{"everything": true}')).status, 400);
      assert.equal((await post(`${demo.realm}/${demo.treasury.clientId}`, { authorization: `Bearer ${await demoToken(server(), demo.branch)}`, 'content-type': 'application/json' })).status, 403);
      assert.equal((await post(`${demo.realm}/${demo.treasury.clientId}`, { 'content-type': 'application/json' })).status, 401);
      assertWorks(await use(await demoToken(server(), demo.treasury)), 'treasury-app, whose revocation every one of these refused', { operatorScope: false });
    });

    // Last of the suite: the reset empties the store (docs/sandbox.md), the data file's clients come back.
    test('a sandbox reset keeps a client\'s revocation, as it keeps the realm\'s not-before: a token revoked before it stays refused, one obtained after it works', async () => {
      const old = await demoToken(server(), demo.branch);
      behindWallClock(clock);
      await succeeded(['clients', 'revoke-tokens', '--realm', demo.realm, '--client-id', demo.branch.clientId, '--db', dbUrl()]);
      await succeeded(['sandbox', 'reset', '--data', demoDataFile, '--db', dbUrl(), '--yes']);
      clock.advance(authSnapshotMaxAgeMs);
      deposit = await someDeposit(server());
      const listed = JSON.parse(await succeeded(['clients', 'list', '--realm', demo.realm, '--db', dbUrl(), '--json'])) as Array<{ clientId: string; tokensNotBefore: number }>;
      assert.ok((listed.find((row) => row.clientId === demo.branch.clientId)?.tokensNotBefore ?? 0) > 0, 'the not-before survived the reset');
      assertCutOff(await use(old), 'a token revoked before the reset');
      const fresh = await demoToken(server(), demo.branch);
      assert.equal((await use(fresh)).retrieve.status, 200, 'a token obtained after the reset');
    });
  });
}

// =============================================================================================
// Two instances on one PostgreSQL store
// =============================================================================================

const postgres = storeTargets.find((target) => target.name === 'postgres');
/** Both instances' one clock: the test ages their auth snapshots together. */
const sharedClock = new FakeClock(Date.now() - wallClockLeadMs);

describe('client revocation on two instances sharing one PostgreSQL store: seen by the other instance within the auth snapshot\'s second', { skip: postgres === undefined ? 'no PostgreSQL target' : postgres.skip }, () => {
  let first: TestServer | undefined;
  let second: TestServer | undefined;
  let drop: (() => Promise<void>) | undefined;
  let dbUrl = '';
  let deposit: string | undefined;
  before(async () => {
    const created = await postgres!.create();
    dbUrl = created.url;
    drop = created.drop;
    behindWallClock(sharedClock);
    first = await startTestServer({ db: dbUrl, clock: sharedClock, flags: { operatorApi: true }, deployment: 'embedded' });
    // Same public URL: a token of either instance is the realm's, verified by both with the shared keys.
    second = await startTestServer({ db: dbUrl, clock: sharedClock, flags: { operatorApi: true }, publicUrl: first.url, deployment: 'embedded' });
    deposit = await someDeposit(first);
  });
  after(async () => {
    await second?.close();
    await first?.close();
    await drop?.();
  });
  const instance = (which: 'first' | 'second') => () => (which === 'first' ? first : second) ?? assert.fail('instances not started');
  const onFirst = callsOf(instance('first'), () => deposit ?? assert.fail('no deposit'));
  const onSecond = callsOf(instance('second'), () => deposit ?? assert.fail('no deposit'));

  test('a revocation through one instance\'s operator API: refused there at once, on the other once the clock has moved past the second; a token obtained after it works on both', async () => {
    const [operator, revoked, other] = [await newSecretClient(dbUrl, 'ops-app'), await newSecretClient(dbUrl, 'shared-revoked-app'), await newSecretClient(dbUrl, 'shared-kept-app')];
    const old = await demoToken(instance('first')(), revoked);
    const othersToken = await demoToken(instance('second')(), other);
    // Each instance has verified the token and holds the client in its snapshot.
    assertWorks(await onFirst.use(old), 'at the first instance, before');
    assertWorks(await onSecond.use(old), 'at the second instance, before');
    const answer = await send(`${instance('first')().url}/operator/v1/clients/${demo.realm}/${revoked.clientId}/revoke-tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await demoToken(instance('first')(), operator)}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assertCutOff(await onFirst.use(old), 'at the instance that revoked');
    sharedClock.advance(authSnapshotMaxAgeMs);
    assertCutOff(await onSecond.use(old), 'at the other instance, a second on');
    assertWorks(await onSecond.use(othersToken), 'the other client\'s token at the other instance');
    const fresh = await demoToken(instance('second')(), revoked);
    assertWorks(await onSecond.use(fresh), 'a token the other instance issued after the revocation, there');
    assertWorks(await onFirst.use(fresh), 'the same token at the instance that revoked');
  });

  test('clients disable and clients revoke-tokens (CLI, on the shared store): both instances refuse the client\'s earlier tokens within the second', async () => {
    const [disabled, revoked] = [await newSecretClient(dbUrl, 'shared-disabled-app'), await newSecretClient(dbUrl, 'shared-cli-revoked-app')];
    const disabledToken = await demoToken(instance('first')(), disabled);
    const revokedToken = await demoToken(instance('second')(), revoked);
    for (const calls of [onFirst, onSecond]) {
      assertWorks(await calls.use(disabledToken), 'before');
      assertWorks(await calls.use(revokedToken), 'before');
    }
    behindWallClock(sharedClock);
    await succeeded(['clients', 'disable', '--realm', demo.realm, '--client-id', disabled.clientId, '--db', dbUrl]);
    await succeeded(['clients', 'revoke-tokens', '--realm', demo.realm, '--client-id', revoked.clientId, '--db', dbUrl]);
    sharedClock.advance(authSnapshotMaxAgeMs);
    for (const [name, calls] of [['first', onFirst], ['second', onSecond]] as const) {
      assertCutOff(await calls.use(disabledToken), `the disabled client's token at the ${name} instance`);
      assertCutOff(await calls.use(revokedToken), `the revoked client's token at the ${name} instance`);
    }
    const fresh = await demoToken(instance('first')(), revoked);
    assertWorks(await onSecond.use(fresh), 'a token obtained after the revocation, at the other instance');
  });
});
