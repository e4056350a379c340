/**
 * Issue 27 (what a newcomer tripped on), item 3: `coregate serve` on a port in use says which port,
 * who likely holds it and how to move (--port / COREGATE_PORT), and removes the SQLite database it
 * had just created (with its -wal/-shm files and the directory made for it), never a database that
 * existed before; a missing TLS file is refused in words before anything is created. The compiled
 * CLI as a process: `serve` owns its process.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runCli, runCliProcess } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-failed-start-'));
// The test's own settings only: none of the serve settings a developer's shell may hold.
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('COREGATE_'))), COREGATE_MASTER_KEY: '' };
/** A port held by another listener for the whole file. */
let holder: Server;
let port: number;

before(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  port = (holder.address() as { port: number }).port;
});
after(async () => {
  await new Promise((resolve) => holder.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

// Generous: `serve --workers 2` starts three processes, which on a loaded 2-core machine (two whole
// suites at once) took more than runCliProcess's default 30 s. A bound, not a measurement.
const serveOn = (db: string, ...flags: string[]) => runCliProcess(['serve', '--port', String(port), '--host', '127.0.0.1', '--log-level', 'error', '--db', db, ...flags], { env, timeoutMs: 120_000 });

test('issue 27 item 3: serve on a port in use names the port and the fix, and removes the SQLite database (and the directory) it had created', async () => {
  const directory = join(dir, 'new-store');
  const result = await serveOn(`sqlite:${join(directory, 'coregate.db')}`, '--data', 'demo/sandbox.json');
  assert.notEqual(result.code, 0, result.stdout);
  assert.match(result.stderr, new RegExp(`^coregate: port ${port} on 127\\.0\\.0\\.1 is already in use \\(EADDRINUSE\\): another process listens on it, often a coregate serve or \`npm start\` started earlier and still running\\. Stop that process .*, or choose another port with --port / COREGATE_PORT \\(0 takes any free port\\)$`, 'm'));
  assert.match(result.stderr, /^coregate: the start failed, so the database it had created is removed \(.*coregate\.db\)$/m);
  assert.equal(existsSync(directory), false, `left behind: ${existsSync(directory) ? readdirSync(directory).join(', ') : ''}`);
});

test('issue 27 item 3: a failed start never removes a database that existed before it', async () => {
  const db = `sqlite:${join(dir, 'existing.db')}`;
  const created = await runCli(['realms', 'add', '--realm', 'kept', '--db', db], { env });
  assert.equal(created.code, 0, created.stderr);
  const result = await serveOn(db);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, new RegExp(`port ${port} .* is already in use`));
  assert.doesNotMatch(result.stderr, /database it had created/);
  assert.ok(existsSync(join(dir, 'existing.db')));
  const realms = await runCli(['realms', 'list', '--db', db, '--json'], { env });
  assert.deepEqual((JSON.parse(realms.stdout) as Array<{ name: string }>).map((realm) => realm.name), ['kept'], 'the database and its records are intact');
});

test('issue 27 item 2: serve refuses a missing TLS file naming the flag, the file and what to do, before it creates a database', async () => {
  const directory = join(dir, 'tls-store');
  const certificate = join(dir, 'no-such-cert.pem');
  const result = await serveOn(`sqlite:${join(directory, 'coregate.db')}`, '--tls-cert', certificate, '--tls-key', certificate);
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /^coregate: --tls-cert \/ COREGATE_TLS_CERT: .*no-such-cert\.pem does not exist \(looked for .*no-such-cert\.pem\): check the path .*; --tls-cert \/ COREGATE_TLS_CERT must name the file with the server's PEM certificate$/m);
  assert.doesNotMatch(result.stderr, /ENOENT/);
  assert.equal(existsSync(directory), false, 'nothing was created');
});

test('serve --workers 2 on a port in use: the workers fail to listen, the supervisor stops and removes the SQLite database it had created', async () => {
  const directory = join(dir, 'workers-store');
  const result = await serveOn(`sqlite:${join(directory, 'coregate.db')}`, '--workers', '2');
  assert.notEqual(result.code, 0, result.stdout);
  assert.match(result.stderr, new RegExp(`port ${port} on 127\\.0\\.0\\.1 is already in use`));
  assert.match(result.stderr, /^coregate: the start failed, so the database it had created is removed \(.*coregate\.db.*\)$/m);
  assert.equal(existsSync(directory), false, `left behind: ${existsSync(directory) ? readdirSync(directory).join(', ') : ''}`);
});
