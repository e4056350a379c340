/**
 * docs/auth.md, "Client secrets" and "A client's secret and tokens": a client secret, an
 * Authorization header value or an access token never appears in a log line, while a refused client
 * authentication is logged with its client id and cause so that operators can diagnose it.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { basicAuth, demo, postForm, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { repoRoot } from '../helpers/repo-root.js';

const { treasury, branch, reporting } = demo;
const grant = { grant_type: 'client_credentials' };
/** Near misses of real secrets: a log that printed "what was sent" would leak these. */
const wrongSecret = `${treasury.secret.slice(0, -1)}X`;
const wrongBasicSecret = `${branch.secret.slice(0, -1)}Y`;
const processTimeoutMs = 30_000;

/** Every string that must never be found in a log line. */
function forbidden(values: Array<string | undefined>): string[] {
  return values.filter((value): value is string => typeof value === 'string' && value.length > 0);
}

/** The JWT and, separately, its signature: either one in a log would let a reader replay it. */
function tokenParts(token: string): string[] {
  return [token, token.split('.')[2] ?? token];
}

function assertNoLineContains(lines: string[], secrets: string[]): void {
  assert.ok(lines.length > 0, 'the run produced log lines');
  for (const secret of secrets) {
    const leaking = lines.filter((line) => line.includes(secret));
    assert.deepEqual(leaking, [], `a log line contains the secret value ${JSON.stringify(secret.slice(0, 12))}...`);
  }
}

function parsedLines(lines: string[]): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * The lines logged since `mark`, once `requests` requests have logged their completion (the
 * completion line may be written just after the client has read the response).
 */
async function linesSince(server: TestServer, mark: number, requests: number): Promise<string[]> {
  const deadline = Date.now() + 5_000;
  const completed = () => server.logLines.slice(mark).filter((line) => line.includes('"msg":"request completed"')).length;
  while (completed() < requests && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(completed(), requests, 'every request logged its completion');
  return server.logLines.slice(mark);
}

describeEachStore('secrets never reach the logs', ({ server }) => {
  const tokenUrl = () => server().tokenUrl();
  const introspectUrl = () => `${server().tokenUrl()}/introspect`;

  test('client_secret_post, right and wrong secret: no log line holds either secret or the token', async () => {
    const mark = server().logLines.length;
    const right = await postForm(tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: treasury.secret });
    const wrong = await postForm(tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: wrongSecret });
    assert.equal(right.status, 200);
    assert.equal(wrong.status, 401);
    const lines = await linesSince(server(), mark, 2);
    assertNoLineContains(lines, forbidden([treasury.secret, wrongSecret, ...tokenParts(right.body.access_token)]));
  });

  test('client_secret_basic, right and wrong secret: no log line holds the secrets, the header values or the token', async () => {
    const mark = server().logLines.length;
    const rightHeader = basicAuth(branch.clientId, branch.secret);
    const wrongHeader = basicAuth(branch.clientId, wrongBasicSecret);
    const right = await postForm(tokenUrl(), grant, { authorization: rightHeader });
    const wrong = await postForm(tokenUrl(), grant, { authorization: wrongHeader });
    assert.equal(right.status, 200);
    assert.equal(wrong.status, 401);
    const lines = await linesSince(server(), mark, 2);
    assertNoLineContains(
      lines,
      forbidden([
        branch.secret,
        wrongBasicSecret,
        rightHeader,
        wrongHeader,
        rightHeader.slice('Basic '.length),
        wrongHeader.slice('Basic '.length),
        ...tokenParts(right.body.access_token),
      ]),
    );
  });

  test('a secret misplaced in the token endpoint\'s query string is masked in the logged URL', async () => {
    const mark = server().logLines.length;
    const response = await postForm(`${tokenUrl()}?client_secret=${encodeURIComponent(reporting.secret)}`, {
      ...grant,
      client_id: reporting.clientId,
    });
    assert.equal(response.status, 401);
    const lines = await linesSince(server(), mark, 1);
    assertNoLineContains(lines, [reporting.secret, encodeURIComponent(reporting.secret)]);
    const incoming = parsedLines(lines).find((line) => line.msg === 'incoming request') as { req: { url: string } } | undefined;
    assert.ok(incoming, 'the request is logged');
    assert.match(incoming.req.url, /^\/realms\/sandbox\/protocol\/openid-connect\/token\?client_secret=/);
    assert.ok(incoming.req.url.includes('REDACTED'), incoming.req.url);
  });

  test('a secret misplaced in the query string of a mistyped path (404) never reaches the log', async () => {
    const mark = server().logLines.length;
    const mistyped = `${server().realmUrl()}/protocol/openid-connect/tokn?client_id=${reporting.clientId}&client_secret=${encodeURIComponent(reporting.secret)}`;
    const response = await postForm(mistyped, grant);
    assert.equal(response.status, 404);
    const lines = await linesSince(server(), mark, 1);
    assertNoLineContains(lines, [reporting.secret, encodeURIComponent(reporting.secret)]);
  });

  test('a secret in the query string of a GET on the token path (no such route) never reaches the log', async () => {
    const mark = server().logLines.length;
    const response = await fetch(`${tokenUrl()}?grant_type=client_credentials&client_id=${reporting.clientId}&client_secret=${encodeURIComponent(reporting.secret)}`);
    assert.ok(response.status >= 400);
    await response.text();
    const lines = await linesSince(server(), mark, 1);
    assertNoLineContains(lines, [reporting.secret, encodeURIComponent(reporting.secret)]);
  });

  test('an access token in a query string (access_token=...) is masked in the logged URL', async () => {
    const token = (await postForm(tokenUrl(), { ...grant, client_id: reporting.clientId, client_secret: reporting.secret })).body.access_token as string;
    const mark = server().logLines.length;
    const response = await fetch(`${server().url}/health/live?access_token=${token}`);
    assert.equal(response.status, 200);
    await response.text();
    const lines = await linesSince(server(), mark, 1);
    assertNoLineContains(lines, tokenParts(token));
  });

  test('a Bearer Authorization header is never logged, on a known route or an unknown one', async () => {
    const token = (await postForm(tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: treasury.secret })).body.access_token as string;
    const mark = server().logLines.length;
    const bearer = { authorization: `Bearer ${token}` };
    const onToken = await postForm(tokenUrl(), { ...grant, client_id: reporting.clientId, client_secret: reporting.secret }, bearer);
    assert.equal(onToken.status, 200);
    const onApi = await fetch(`${server().url}/v1/term-deposits/initiate`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
    });
    await onApi.text();
    // A token the API refuses (tampered signature) must not be logged either, e.g. as the "bad token".
    const tampered = `${token.slice(0, -6)}AAAAAA`;
    const refused = await fetch(`${server().url}/v1/term-deposits/initiate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tampered}`, 'content-type': 'application/json', accept: 'application/json' },
      body: '{}',
    });
    await refused.text();
    assert.equal(refused.status, 401, 'the API refuses the tampered token');
    const lines = await linesSince(server(), mark, 3);
    assertNoLineContains(lines, forbidden([...tokenParts(token), ...tokenParts(tampered), reporting.secret, ...tokenParts(onToken.body.access_token)]));
  });

  test('introspection carrying a token (Basic and form authentication): neither the token nor the secrets are logged', async () => {
    const token = (await postForm(tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: treasury.secret })).body.access_token as string;
    const mark = server().logLines.length;
    const header = basicAuth(treasury.clientId, treasury.secret);
    const byBasic = await postForm(introspectUrl(), { token }, { authorization: header });
    const byForm = await postForm(introspectUrl(), { token, client_id: branch.clientId, client_secret: branch.secret });
    const refused = await postForm(introspectUrl(), { token, client_id: branch.clientId, client_secret: wrongBasicSecret });
    assert.equal(byBasic.status, 200);
    assert.equal(byBasic.body.active, true);
    assert.equal(byForm.status, 200);
    assert.equal(byForm.body.active, true);
    assert.equal(refused.status, 401);
    const lines = await linesSince(server(), mark, 3);
    assertNoLineContains(
      lines,
      forbidden([...tokenParts(token), treasury.secret, branch.secret, wrongBasicSecret, header, header.slice('Basic '.length)]),
    );
  });

  test('a refused client authentication is logged with the client id and the cause (wrong secret)', async () => {
    const mark = server().logLines.length;
    const response = await postForm(tokenUrl(), { ...grant, client_id: treasury.clientId, client_secret: wrongSecret });
    assert.equal(response.status, 401);
    const lines = await linesSince(server(), mark, 1);
    const refusal = parsedLines(lines).find((line) => line.msg === 'oauth request refused');
    assert.ok(refusal, `no refusal line in:\n${lines.join('\n')}`);
    assert.equal(refusal.oauthError, 'invalid_client');
    assert.match(String(refusal.detail), /wrong secret/);
    assert.match(String(refusal.detail), /treasury-app/);
    assert.equal(typeof refusal.reqId, 'string', 'the refusal is tied to its request');
    assertNoLineContains(lines, [wrongSecret, treasury.secret]);
  });

  test('a refused Basic authentication is logged with the client id and the cause', async () => {
    const mark = server().logLines.length;
    const response = await postForm(tokenUrl(), grant, { authorization: basicAuth(branch.clientId, wrongBasicSecret) });
    assert.equal(response.status, 401);
    const lines = await linesSince(server(), mark, 1);
    const refusal = parsedLines(lines).find((line) => line.msg === 'oauth request refused');
    assert.ok(refusal, `no refusal line in:\n${lines.join('\n')}`);
    assert.match(String(refusal.detail), /wrong secret for client branch-portal/);
  });

  test('unknown client and missing secret are told apart in the log (not in the response)', async () => {
    const mark = server().logLines.length;
    const unknown = await postForm(tokenUrl(), { ...grant, client_id: 'ghost-app', client_secret: wrongSecret });
    const noSecret = await postForm(tokenUrl(), { ...grant, client_id: reporting.clientId });
    assert.equal(unknown.status, 401);
    assert.equal(noSecret.status, 401);
    assert.equal(unknown.body.error_description, noSecret.body.error_description);
    const lines = await linesSince(server(), mark, 2);
    const details = parsedLines(lines)
      .filter((line) => line.msg === 'oauth request refused')
      .map((line) => String(line.detail));
    assert.equal(details.length, 2, lines.join('\n'));
    assert.match(details[0] ?? '', /unknown client/);
    assert.match(details[0] ?? '', /ghost-app/);
    assert.match(details[1] ?? '', /reporting-app/);
    assert.match(details[1] ?? '', /no secret/);
    assertNoLineContains(lines, [wrongSecret]);
  });

  test('a successful token request is logged (request and completion) without the secret', async () => {
    const mark = server().logLines.length;
    const response = await postForm(tokenUrl(), { ...grant, client_id: reporting.clientId, client_secret: reporting.secret });
    assert.equal(response.status, 200);
    const lines = parsedLines(await linesSince(server(), mark, 1));
    assert.ok(lines.some((line) => line.msg === 'incoming request'));
    const completed = lines.find((line) => line.msg === 'request completed') as { res: { statusCode: number } } | undefined;
    assert.equal(completed?.res.statusCode, 200);
    assertNoLineContains(lines.map((line) => JSON.stringify(line)), [reporting.secret, ...tokenParts(response.body.access_token)]);
  });
});

describe('secrets in the output of a coregate serve process', () => {
  const dirs: string[] = [];
  const children: ChildProcessWithoutNullStreams[] = [];

  after(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Serves demo/sandbox.json (with `extraArgs`), makes right and wrong token requests and an
   * introspection, stops the process, and answers its output with the secrets it must guard.
   */
  async function serveAndAuthenticate(extraArgs: string[]) {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-secrets-'));
    dirs.push(dir);
    const spawned = spawn(
      process.execPath,
      ['dist/src/cli/coregate.cjs', 'serve', '--port', '0', '--host', '127.0.0.1', '--data', 'demo/sandbox.json', '--db', `sqlite:${join(dir, 'coregate.db')}`, '--log-level', 'debug', ...extraArgs],
      { cwd: repoRoot, env: { ...process.env } },
    );
    children.push(spawned);
    let stdout = '';
    let stderr = '';
    spawned.stdout.on('data', (chunk) => (stdout += String(chunk)));
    spawned.stderr.on('data', (chunk) => (stderr += String(chunk)));
    const exit = new Promise<number | null>((resolve) => spawned.once('exit', (code) => resolve(code)));

    const deadline = Date.now() + processTimeoutMs;
    let url: string | undefined;
    while (!url && Date.now() < deadline) {
      url = /coregate is ready on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (spawned.exitCode !== null) break;
      if (!url) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(url, `no banner; stderr: ${stderr}`);
    const tokenUrl = `${url}/realms/sandbox/protocol/openid-connect/token`;

    const right = await postForm(tokenUrl, { ...grant, client_id: treasury.clientId, client_secret: treasury.secret });
    const wrong = await postForm(tokenUrl, { ...grant, client_id: treasury.clientId, client_secret: wrongSecret });
    const basic = await postForm(tokenUrl, grant, { authorization: basicAuth(branch.clientId, branch.secret) });
    const introspection = await postForm(`${tokenUrl}/introspect`, { token: right.body.access_token }, { authorization: basicAuth(branch.clientId, branch.secret) });
    assert.equal(right.status, 200);
    assert.equal(wrong.status, 401);
    assert.equal(basic.status, 200);
    assert.equal(introspection.body.active, true);

    spawned.kill('SIGTERM');
    const code = await Promise.race([
      exit,
      new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('process did not exit')), processTimeoutMs).unref()),
    ]);
    assert.equal(code, 0, stderr);

    const lines = stdout.split('\n').filter((line) => line.trim() !== '');
    const jsonLines = lines.filter((line) => line.startsWith('{'));
    const bannerLines = lines.filter((line) => !line.startsWith('{'));
    for (const line of jsonLines) JSON.parse(line);
    assert.ok(jsonLines.length >= 5, 'the process logged its requests');
    assert.ok(jsonLines.some((line) => line.includes('wrong secret for client treasury-app')), 'the refusal is logged');
    const secrets = forbidden([
      treasury.secret,
      branch.secret,
      reporting.secret,
      wrongSecret,
      basicAuth(branch.clientId, branch.secret).slice('Basic '.length),
      ...tokenParts(right.body.access_token),
      ...tokenParts(basic.body.access_token),
    ]);
    return { stdout, stderr, jsonLines, bannerLines, secrets };
  }

  test('sandbox mode: the demo secret appears only in the start-up banner\'s token request, never in a JSON log line; wrong secrets and tokens never', async () => {
    const { stderr, jsonLines, bannerLines, secrets } = await serveAndAuthenticate(['--sandbox']);
    // The banner's ready-to-paste request carries the data file's sample secret: intended
    // (README.md, "Quick start").
    const curl = bannerLines.filter((line) => line.includes(treasury.secret));
    assert.equal(curl.length, 1, bannerLines.join('\n'));
    assert.match(curl[0] ?? '', /client_secret=/);

    assertNoLineContains(jsonLines, secrets);
    for (const secret of secrets) assert.equal(stderr.includes(secret), false, 'stderr holds a secret');
    for (const secret of secrets.filter((s) => s !== treasury.secret)) {
      assert.equal(bannerLines.some((line) => line.includes(secret)), false, 'the banner holds only the demo sample secret');
    }
  });

  test('outside sandbox mode (production): no client secret in the start-up banner or anywhere in stdout and stderr; the banner still says how to request a token', async () => {
    const { stdout, stderr, bannerLines, secrets } = await serveAndAuthenticate([]);
    for (const secret of secrets) {
      assert.equal(stdout.includes(secret), false, `stdout holds the secret value ${JSON.stringify(secret.slice(0, 12))}...`);
      assert.equal(stderr.includes(secret), false, `stderr holds the secret value ${JSON.stringify(secret.slice(0, 12))}...`);
    }
    const request = bannerLines.filter((line) => line.includes('client_secret='));
    assert.equal(request.length, 1, bannerLines.join('\n'));
    assert.match(request[0] ?? '', /client_id=treasury-app .*"client_secret=\$CLIENT_SECRET"/);
  });
});
