/**
 * The failover drill's own tools, checked on their own: the TCP proxy (the address that moves),
 * the PostgreSQL primary with its synchronous standby, and the check that every 503 is audited. The cluster's tests skip without the
 * PostgreSQL binaries or root, unless CI=true (test/helpers/pg-cluster.ts).
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { PgCluster, pgClusterSkip } from '../helpers/pg-cluster.js';
import { freePort } from '../helpers/processes.js';
import { repoRoot } from '../helpers/server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { waitFor } from '../helpers/wait.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { auditEntry } from '../../src/operations/operation-audit.js';
import { insertAuditEntries } from '../../src/store/audit.js';
import { openStore } from '../../src/store/connect.js';
import { checkUnavailableAudited, outageLinesOf } from './failover-checks.js';

/** A server that answers each connection with its name, then echoes. */
async function namedServer(name: string): Promise<{ server: Server; port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.write(`${name}\n`);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port, sockets };
}

/** Connects and collects what arrives until the connection ends; `ended` says how it ended. */
function client(port: number): { socket: Socket; received: () => string; ended: Promise<string> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.on('data', (chunk) => {
    text += String(chunk);
  });
  const ended = new Promise<string>((resolve) => {
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
    socket.on('close', () => resolve('closed'));
  });
  return { socket, received: () => text, ended };
}

describe('TCP proxy', () => {
  test('new connections follow retarget; open ones stay where they were until cutAll cuts them all', async () => {
    const a = await namedServer('a');
    const b = await namedServer('b');
    const proxy = await TcpProxy.start(a.port);
    try {
      const first = client(proxy.port);
      await waitFor('a to answer', async () => (first.received() === 'a\n' ? true : undefined));
      proxy.retarget(b.port);
      const second = client(proxy.port);
      await waitFor('b to answer', async () => (second.received() === 'b\n' ? true : undefined));
      first.socket.write('still a');
      await waitFor('the first connection still to reach a', async () => (first.received() === 'a\nstill a' ? true : undefined));
      assert.equal(proxy.counts.open, 2);
      assert.equal(proxy.cutAll(), 2);
      assert.deepEqual(await Promise.all([first.ended, second.ended]), ['ECONNRESET', 'ECONNRESET']);
      await waitFor('the servers to see their connections go', async () => (a.sockets.size + b.sockets.size === 0 ? true : undefined));
      assert.equal(proxy.counts.cut, 2);
    } finally {
      await proxy.close();
      a.server.close();
      b.server.close();
    }
  });

  test('paused, it refuses new connections or holds them until resume; a dead target is a reset', async () => {
    const a = await namedServer('a');
    const proxy = await TcpProxy.start(a.port);
    try {
      proxy.pause('refuse');
      assert.equal(await client(proxy.port).ended, 'ECONNRESET');
      proxy.pause('hold');
      const held = client(proxy.port);
      held.socket.write('hello');
      await waitFor('the connection to be held', async () => (proxy.counts.held === 1 ? true : undefined));
      assert.equal(held.received(), '', 'nothing reaches the target while held');
      proxy.resume();
      await waitFor('the held connection to be piped', async () => (held.received() === 'a\nhello' ? true : undefined));
      held.socket.destroy();
      // A port nothing listens on any more: new connections are refused.
      proxy.retarget(await freePort());
      assert.equal(await client(proxy.port).ended, 'ECONNRESET');
      assert.equal(proxy.counts.upstreamFailed, 1);
      assert.equal(proxy.counts.refused, 1);
    } finally {
      await proxy.close();
      a.server.close();
    }
  });

  test('a process that cut connections its target had already closed still exits (no handle left closing)', () => {
    // On Node 20 a reset after end() left a handle that never closed: the process spun at exit.
    const dir = mkdtempSync(join(tmpdir(), 'coregate-tcp-proxy-'));
    const script = join(dir, 'cut.mts');
    writeFileSync(
      script,
      `import { createServer, connect } from 'node:net';
import { TcpProxy } from ${JSON.stringify(join(repoRoot, 'test/helpers/tcp-proxy.ts'))};
const server = createServer((socket) => { socket.on('error', () => {}); socket.end('bye'); });
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const proxy = await TcpProxy.start(server.address().port);
const sockets = Array.from({ length: 5 }, () => { const socket = connect(proxy.port, '127.0.0.1'); socket.on('error', () => {}); socket.on('data', () => {}); return socket; });
await new Promise((resolve) => setTimeout(resolve, 300));
proxy.cutAll();
await proxy.close();
server.close();
for (const socket of sockets) socket.destroy();
console.log('done');
`,
    );
    try {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, timeout: 30_000, encoding: 'utf8' });
      assert.equal(run.signal, null, `the process did not exit by itself: ${run.stderr}`);
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stdout, /done/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

const clusterSkip = pgClusterSkip();

describe('PostgreSQL primary and synchronous standby', { skip: clusterSkip }, () => {
  test('a committed row survives the primary killed, the standby promoted, a standby rebuilt and a second failover; stop removes everything', { timeout: 120_000 }, async () => {
    const cluster = await PgCluster.start();
    const dataDirs = () => cluster.nodes.map((node) => node.dataDir);
    try {
      await cluster.createDatabase('drill');
      const [sync] = await cluster.query<{ sync_state: string }>(cluster.primary.port, "select sync_state from pg_stat_replication where application_name = 'standby1'");
      assert.equal(sync?.sync_state, 'sync');
      await cluster.query(cluster.primary.port, 'create table acknowledged (id int primary key)', 'drill');
      await cluster.query(cluster.primary.port, 'insert into acknowledged values (1)', 'drill');
      const first = await cluster.killPrimary('sigkill');
      assert.equal(first.role, 'dead');
      await cluster.promoteStandby();
      await cluster.query(cluster.primary.port, 'insert into acknowledged values (2)', 'drill');
      await cluster.rebuildStandby();
      await cluster.query(cluster.primary.port, 'insert into acknowledged values (3)', 'drill');
      await cluster.killPrimary('immediate');
      await cluster.promoteStandby();
      const rows = await cluster.query<{ id: number }>(cluster.primary.port, 'select id from acknowledged order by id', 'drill');
      assert.deepEqual(rows.map((row) => row.id), [1, 2, 3]);
      assert.equal(cluster.nodes.length, 3);
    } finally {
      const dirs = dataDirs();
      await cluster.stop();
      await cluster.stop();
      for (const dir of dirs) assert.equal(existsSync(dir), false, `${dir} removed`);
    }
  });
});

describe('the audit check of the 503s', () => {
  test('every 503 received after authentication must have its audit record; those the API refused before authentication owe none; a missing one is named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'coregate-unavailable-audit-'));
    const store = await openStore(`sqlite:${join(dir, 'coregate.db')}`);
    try {
      await migrateEmbedded(store);
      const record = (correlationId: string) =>
        auditEntry({ operation: 'termDeposit.initiate', clientId: 'c', backboneUser: null, workstation: null, correlationId, reference: null, httpStatus: 503, outcome: 'Refused', durationMs: 1, details: {} }, Date.now());
      await insertAuditEntries(store.db, [record('audited'), record('twice'), record('twice')]);
      const log = [
        JSON.stringify({ level: 40, msg: 'business API request met a database outage', correlationId: 'before-auth', refusalAudited: false }),
        JSON.stringify({ level: 40, msg: 'business API request met a database outage', correlationId: 'audited', refusalAudited: true }),
        '{"level":40,"msg":"business API request met a database outa', // cut by the output's bound
        JSON.stringify({ level: 30, msg: 'request completed', correlationId: 'audited' }),
      ].join('\n');
      const outageLines = outageLinesOf(log);
      assert.deepEqual(outageLines, [
        { correlationId: 'before-auth', refusalAudited: false },
        { correlationId: 'audited', refusalAudited: true },
      ]);
      const passing = await checkUnavailableAudited({ db: store.db, received: new Map([['audited', 1], ['twice', 2], ['before-auth', 1]]), outageLines, boundMs: 0 });
      assert.deepEqual(passing, { answered: 4, beforeAuthentication: 1, audited: 3, anomalies: [] });
      const failing = await checkUnavailableAudited({ db: store.db, received: new Map([['twice', 3], ['missing', 1]]), outageLines, boundMs: 0 });
      assert.equal(failing.anomalies.length, 2);
      assert.match(failing.anomalies.join('\n'), /correlation twice answered 3 time\(s\) after authentication, audited 2 time\(s\)/);
      assert.match(failing.anomalies.join('\n'), /correlation missing answered 1 time\(s\) after authentication, audited 0 time\(s\)/);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
