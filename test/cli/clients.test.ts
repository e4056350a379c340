/**
 * `coregate clients ...`: onboarding and managing OAuth clients on the store of a running server
 * (docs/auth.md, "Client secrets": generated secrets of at least 256 bits, shown once, stored only
 * as a hash). Each test works on a client of its own, on each store, through the real CLI process.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { runCli, type CliResult } from '../helpers/cli.js';
import { basicAuth, demo, postForm } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { authSnapshotMaxAgeMs } from '../../src/auth/auth-snapshot.js';

const processTimeoutMs = 30_000;
const grant = { grant_type: 'client_credentials' };
/** 32 random bytes in base64url without padding: 43 characters. */
const generatedSecretPattern = /^[A-Za-z0-9_-]{43,}$/;
const demoSecrets = [demo.treasury.secret, demo.branch.secret, demo.reporting.secret];
/**
 * The server's clock: the auth snapshot ages by it, so a test moves it past authSnapshotMaxAgeMs
 * instead of sleeping that long. It starts at the real time, as the CLI processes (on the real
 * clock) write the clients the server reads.
 */
const clock = new FakeClock(Date.now());

/** Runs `coregate ...` to completion; never throws on a non-zero exit. */
function coregate(args: string[]): Promise<CliResult> {
  return runCli(args, { timeoutMs: processTimeoutMs });
}

function assertSucceeded(result: CliResult): void {
  assert.equal(result.code, 0, `exit ${result.code}: ${result.stderr}`);
}

/** The secret of the human output's `client_secret: ...` line. */
function secretOf(stdout: string): string {
  const match = /^client_secret: (\S+)$/m.exec(stdout);
  assert.ok(match?.[1], `no client_secret line in:\n${stdout}`);
  return match[1];
}

describeEachStore('coregate clients', ({ server, dbUrl }) => {
  const tokenUrl = () => server().tokenUrl();
  const db = () => ['--db', dbUrl()];
  const tokenFor = (clientId: string, secret: string, extra: Record<string, string> = {}) =>
    postForm(tokenUrl(), { ...grant, client_id: clientId, client_secret: secret, ...extra });

  async function createClient(clientId: string, scopes: string[] = ['termDeposit:retrieve']): Promise<string> {
    const result = await coregate(['clients', 'create', '--realm', 'sandbox', '--client-id', clientId, '--scopes', ...scopes, ...db(), '--json']);
    assertSucceeded(result);
    return (JSON.parse(result.stdout) as { clientSecret: string }).clientSecret;
  }

  test('clients create prints a generated secret once (>= 256 bits) that obtains a token with the client\'s scopes and user claims', async () => {
    const result = await coregate([
      'clients', 'create',
      '--realm', 'sandbox',
      '--client-id', 'new-app',
      '--scopes', 'termDeposit:retrieve', 'termDeposit:initiate',
      '--technical-user', 'jdoe',
      '--default-workstation', 'WS-BRANCH-07',
      ...db(),
    ]);
    assertSucceeded(result);
    const secret = secretOf(result.stdout);
    assert.match(secret, generatedSecretPattern);
    assert.ok(Buffer.from(secret, 'base64url').length >= 32, 'at least 256 bits');
    assert.equal(result.stdout.split(secret).length - 1, 1, 'the secret is printed exactly once');
    assert.match(result.stdout, /new-app/);
    assert.match(result.stdout, /only once/);
    assert.equal(result.stderr.includes(secret), false);

    const response = await tokenFor('new-app', secret);
    assert.equal(response.status, 200, JSON.stringify(response.body));
    assert.deepEqual(response.body.scope.split(' ').sort(), ['termDeposit:initiate', 'termDeposit:retrieve']);
    const claims = decodeJwt(response.body.access_token);
    assert.equal(claims.client_id, 'new-app');
    assert.equal(claims.azp, 'new-app');
    assert.equal(claims.preferred_username, 'service-account-new-app');
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-BRANCH-07');
    assert.equal(claims.iss, `${server().coregate.publicUrl}/realms/sandbox`);
    assert.match(String(claims.sub), /^[0-9a-f-]{36}$/);
    const byBasic = await postForm(tokenUrl(), grant, { authorization: basicAuth('new-app', secret) });
    assert.equal(byBasic.status, 200, 'the secret also authenticates with client_secret_basic');
  });

  test('clients create --json prints {clientId, clientSecret} and nothing else', async () => {
    const result = await coregate(['clients', 'create', '--realm', 'sandbox', '--client-id', 'json-app', '--scopes', 'termDeposit:retrieve,merchandisingLoan:execute', ...db(), '--json']);
    assertSucceeded(result);
    const output = JSON.parse(result.stdout) as Record<string, string>;
    assert.deepEqual(Object.keys(output).sort(), ['clientId', 'clientSecret']);
    assert.equal(output.clientId, 'json-app');
    assert.match(output.clientSecret ?? '', generatedSecretPattern);
    const response = await tokenFor('json-app', output.clientSecret ?? '');
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.scope.split(' ').sort(), ['merchandisingLoan:execute', 'termDeposit:retrieve'], 'comma-separated scopes');
    assert.equal('backbone_user' in decodeJwt(response.body.access_token), false, 'no technical user: no user claims');
  });

  test('creating an existing client fails with a clear message and a non-zero exit, and keeps its secret', async () => {
    const secret = await createClient('dup-app');
    const again = await coregate(['clients', 'create', '--realm', 'sandbox', '--client-id', 'dup-app', '--scopes', 'termDeposit:initiate', ...db()]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /dup-app/);
    assert.match(again.stderr, /already exists/);
    assert.doesNotMatch(again.stdout, /client_secret/);
    const response = await tokenFor('dup-app', secret);
    assert.equal(response.status, 200, 'the existing client is untouched');
    assert.equal(response.body.scope, 'termDeposit:retrieve');
  });

  test('clients create refuses an invalid client id with a message naming --client-id', async () => {
    const result = await coregate(['clients', 'create', '--realm', 'sandbox', '--client-id', 'bad id/with space', '--scopes', 'termDeposit:retrieve', ...db()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--client-id/);
  });

  test('clients rotate-secret: the old secret gets 401 invalid_client, the new one 200', async () => {
    const oldSecret = await createClient('rotate-app');
    assert.equal((await tokenFor('rotate-app', oldSecret)).status, 200);
    const result = await coregate(['clients', 'rotate-secret', '--realm', 'sandbox', '--client-id', 'rotate-app', ...db()]);
    assertSucceeded(result);
    const newSecret = secretOf(result.stdout);
    assert.match(newSecret, generatedSecretPattern);
    assert.notEqual(newSecret, oldSecret);
    assert.equal(result.stdout.includes(oldSecret), false);
    assert.equal((await tokenFor('rotate-app', newSecret)).status, 200, 'the new secret works at once');
    // The old one may be honoured for authSnapshotMaxAgeMs more (docs/deployment.md, "What an
    // instance keeps in memory").
    clock.advance(authSnapshotMaxAgeMs);
    const refused = await tokenFor('rotate-app', oldSecret);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');
    assert.equal((await tokenFor('rotate-app', newSecret)).status, 200);
  });

  test('clients rotate-secret of an unknown client fails naming it', async () => {
    const result = await coregate(['clients', 'rotate-secret', '--realm', 'sandbox', '--client-id', 'ghost-app', ...db()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /ghost-app/);
    assert.match(result.stderr, /does not exist/);
  });

  test('clients disable → 401 invalid_client with the right secret; clients enable → 200 again', async () => {
    const secret = await createClient('toggle-app');
    const disabled = await coregate(['clients', 'disable', '--realm', 'sandbox', '--client-id', 'toggle-app', ...db()]);
    assertSucceeded(disabled);
    assert.match(disabled.stdout, /disabled/);
    // The disabled client may be honoured for authSnapshotMaxAgeMs more (docs/deployment.md, "What
    // an instance keeps in memory").
    clock.advance(authSnapshotMaxAgeMs);
    const refused = await tokenFor('toggle-app', secret);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error, 'invalid_client');

    const enabled = await coregate(['clients', 'enable', '--realm', 'sandbox', '--client-id', 'toggle-app', ...db()]);
    assertSucceeded(enabled);
    assert.match(enabled.stdout, /enabled/);
    assert.equal((await tokenFor('toggle-app', secret)).status, 200);
  });

  test('clients list (human) lists the clients and never prints a secret or a hash', async () => {
    const secret = await createClient('listed-app', ['termDeposit:retrieve', 'termDeposit:initiate']);
    const result = await coregate(['clients', 'list', '--realm', 'sandbox', ...db()]);
    assertSucceeded(result);
    const lines = result.stdout.trim().split('\n');
    assert.match(lines[0] ?? '', /CLIENT ID/);
    for (const clientId of [demo.treasury.clientId, demo.branch.clientId, demo.reporting.clientId, 'listed-app']) {
      assert.ok(lines.some((line) => line.startsWith(`${clientId} `)), `${clientId} is listed`);
    }
    const treasuryLine = lines.find((line) => line.startsWith(demo.treasury.clientId)) ?? '';
    assert.match(treasuryLine, /svc-treasury/);
    assert.match(treasuryLine, /WS-TREASURY-01/);
    for (const value of [...demoSecrets, secret]) assert.equal(result.stdout.includes(value), false, 'a secret is printed');
    assert.doesNotMatch(result.stdout, /[0-9a-f]{64}/i, 'a secret hash is printed');
  });

  test('clients list --json lists the clients with their settings and never a secret or a hash', async () => {
    const secret = await createClient('listed-json-app');
    await coregate(['clients', 'disable', '--realm', 'sandbox', '--client-id', 'listed-json-app', ...db()]);
    const result = await coregate(['clients', 'list', '--realm', 'sandbox', ...db(), '--json']);
    assertSucceeded(result);
    const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    const ids = rows.map((row) => row.clientId);
    for (const clientId of [demo.treasury.clientId, demo.branch.clientId, demo.reporting.clientId, 'listed-json-app']) {
      assert.ok(ids.includes(clientId), `${clientId} is listed`);
    }
    const treasury = rows.find((row) => row.clientId === demo.treasury.clientId);
    assert.equal(treasury?.enabled, true);
    assert.deepEqual(treasury?.scopes, ['termDeposit:initiate', 'termDeposit:retrieve', 'merchandisingLoan:execute']);
    assert.equal(treasury?.technicalUser, 'svc-treasury');
    assert.equal(rows.find((row) => row.clientId === 'listed-json-app')?.enabled, false);
    for (const row of rows) {
      const keys = Object.keys(row).map((key) => key.toLowerCase());
      assert.equal(keys.some((key) => key.includes('secret') || key.includes('hash')), false, `secret field in ${JSON.stringify(Object.keys(row))}`);
    }
    for (const value of [...demoSecrets, secret]) assert.equal(result.stdout.includes(value), false, 'a secret is printed');
    assert.doesNotMatch(result.stdout, /[0-9a-f]{64}/i, 'a secret hash is printed');
  });

  test('an unknown realm: clients create and clients list exit non-zero naming the realm', async () => {
    const commands = [
      ['clients', 'create', '--realm', 'no-such-realm', '--client-id', 'x-app', '--scopes', 'termDeposit:retrieve'],
      ['clients', 'list', '--realm', 'no-such-realm'],
    ];
    const results = await Promise.all(commands.map((command) => coregate([...command, ...db()])));
    for (const [index, result] of results.entries()) {
      const command = commands[index] ?? [];
      assert.notEqual(result.code, 0, command.join(' '));
      assert.match(result.stderr, /no-such-realm/);
      assert.match(result.stderr, /does not exist/);
      assert.doesNotMatch(result.stdout, /client_secret/);
    }
    assert.equal((await tokenFor(demo.treasury.clientId, demo.treasury.secret)).status, 200, 'nothing changed in the real realm');
  });

  test('clients create without --scopes fails with commander\'s message naming the option', async () => {
    const result = await coregate(['clients', 'create', '--realm', 'sandbox', '--client-id', 'no-scopes-app', ...db()]);
    assert.notEqual(result.code, 0);
    assert.match(result.stderr, /--scopes/);
  });
}, { clock });
