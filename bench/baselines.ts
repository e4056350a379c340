/**
 * What the same machine does, measured in the same run: jose signing on every core, a
 * TPC-B-like transfer on better-sqlite3 (WAL, synchronous=FULL), pgbench's TPC-B on the same
 * PostgreSQL with the same connection count, and Fastify's hello-world.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import { rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { postgresTicks, postgresTicksSince, type CpuUse } from './cpu.js';

/** A baseline's throughput and the CPU each of its operations took (this process's, or PostgreSQL's for pgbench), µs. */
export interface BaselineFigure {
  perSecond: number;
  cpuUsPerOperation?: number;
  /** For a baseline served by a process under load (hello-world): its shares of a core (bench/cpu.ts). */
  cpu?: CpuUse;
}

/** `done` operations in `seconds`, and this process's CPU (all its threads) spent since `before`. */
function figure(done: number, seconds: number, before: NodeJS.CpuUsage): BaselineFigure {
  const spent = process.cpuUsage(before);
  return { perSecond: Math.round(done / seconds), cpuUsPerOperation: Math.round(((spent.user + spent.system) / Math.max(1, done)) * 10) / 10 };
}

/** pgbench's TPC-B (scale 1) in a scratch database, with PostgreSQL's own CPU per transaction (every `postgres` process, /proc). */
export function pgbench(databaseUrl: string, connections: number, seconds: number): BaselineFigure {
  pgbenchInit(databaseUrl);
  const before = postgresTicks();
  const tps = pgbenchRun(databaseUrl, connections, seconds);
  const spent = postgresTicksSince(before);
  const transactions = tps * Math.max(1, Math.round(seconds));
  return { perSecond: tps, ...(spent > 0 ? { cpuUsPerOperation: Math.round(((spent / 100) * 1e6 / Math.max(1, transactions)) * 10) / 10 } : {}) };
}

/** jose signing on every core, one worker thread each; the CPU counts the workers' start too. */
export async function joseSigning(alg: 'RS256' | 'ES256', seconds: number): Promise<BaselineFigure> {
  const before = process.cpuUsage();
  const threads = availableParallelism();
  const counts = await Promise.all(
    Array.from({ length: threads }, () => {
      const worker = new Worker(new URL('./sign-worker.mjs', import.meta.url), { workerData: { alg, seconds } });
      return new Promise<number>((resolve, reject) => {
        worker.once('message', (signed: number) => resolve(signed));
        worker.once('error', reject);
      }).finally(() => void worker.terminate());
    }),
  );
  return figure(counts.reduce((sum, count) => sum + count, 0), seconds, before);
}

/** The name the bench's report gives es256Verification's figure. */
export const verificationBaseline = 'one ES256 verification (node:crypto, one core)';

/**
 * One ES256 signature verified with node:crypto on one core (this process's main thread, the
 * synchronous call): the unit a sender-constrained path is judged in (issue 42: a DPoP-bound call
 * at most a bearer call plus two of them, a private_key_jwt + DPoP token plus three, a
 * certificate-bound call plus one). The signing input is a DPoP proof's (an ES256 public JWK in
 * its header, htm, htu, iat, jti, ath), signed once; each verification hashes and checks it anew.
 */
export function es256Verification(seconds: number): BaselineFigure {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = encode({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } });
  const payload = encode({ htm: 'GET', htu: 'http://127.0.0.1:8080/v1/term-deposits/TD-0000000001/retrieve', iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath: 'x'.repeat(43) });
  const signingInput = Buffer.from(`${header}.${payload}`, 'ascii');
  const key = { key: publicKey, dsaEncoding: 'ieee-p1363' as const };
  const signature = sign('sha256', signingInput, { key: privateKey, dsaEncoding: 'ieee-p1363' });
  const before = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  while (performance.now() < deadline) {
    // A batch between clock reads: the loop measures verifications, not performance.now().
    for (let batch = 0; batch < 16; batch++) if (!verify('sha256', signingInput, key, signature)) throw new Error('the baseline signature does not verify');
    done += 16;
  }
  return figure(done, seconds, before);
}

/**
 * TPC-B's transaction on the embedded store coregate uses: debit an account, read it back,
 * credit a teller and a branch, append a history row; one commit, made durable, each time.
 */
export function sqliteTransfers(dir: string, seconds: number): BaselineFigure {
  // A fresh file each time: the bench measures it before and after the deposits.
  const file = join(dir, 'tpcb.db');
  for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
  const db = new Database(file);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(`create table accounts (id integer primary key, balance integer not null);
      create table tellers (id integer primary key, balance integer not null);
      create table branches (id integer primary key, balance integer not null);
      create table history (account integer, teller integer, branch integer, delta integer, at text)`);
    const accountsCount = 100_000;
    const insert = db.prepare('insert into accounts values (?, 0)');
    db.transaction(() => {
      for (let id = 1; id <= accountsCount; id++) insert.run(id);
      for (let id = 1; id <= 10; id++) db.prepare('insert into tellers values (?, 0)').run(id);
      db.prepare('insert into branches values (1, 0)').run();
    })();
    const debit = db.prepare('update accounts set balance = balance + ? where id = ?');
    const read = db.prepare('select balance from accounts where id = ?');
    const teller = db.prepare('update tellers set balance = balance + ? where id = ?');
    const branch = db.prepare('update branches set balance = balance + ? where id = 1');
    const history = db.prepare('insert into history values (?, ?, 1, ?, ?)');
    const transfer = db.transaction((account: number, tellerId: number, delta: number) => {
      debit.run(delta, account);
      read.get(account);
      teller.run(delta, tellerId);
      branch.run(delta);
      history.run(account, tellerId, delta, new Date().toISOString());
    });
    // The CPU of the transfers only, not of the table's filling above.
    const before = process.cpuUsage();
    const deadline = performance.now() + seconds * 1000;
    let done = 0;
    while (performance.now() < deadline) {
      transfer(1 + ((done * 7919) % accountsCount), 1 + (done % 10), 5);
      done += 1;
    }
    return figure(done, seconds, before);
  } finally {
    db.close();
  }
}

/** pgbench's TPC-B tables (scale 1) in the scratch database. */
function pgbenchInit(databaseUrl: string): void {
  execFileSync('pgbench', ['-i', '-s', '1', '-q', databaseUrl], { stdio: 'pipe' });
}

/** pgbench's TPC-B with the bench's connection count: its tps. */
function pgbenchRun(databaseUrl: string, connections: number, seconds: number): number {
  const output = execFileSync('pgbench', ['-n', '-c', String(connections), '-j', String(availableParallelism()), '-T', String(Math.max(1, Math.round(seconds))), databaseUrl], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tps = /tps = ([\d.]+)/.exec(output)?.[1];
  if (tps === undefined) throw new Error(`pgbench printed no tps:\n${output}`);
  return Math.round(Number(tps));
}
