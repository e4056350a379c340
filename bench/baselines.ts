/**
 * What the same machine does, measured in the same run: jose signing on every core, a
 * TPC-B-like transfer on better-sqlite3 (WAL, synchronous=FULL), pgbench's TPC-B on the same
 * PostgreSQL with the same connection count, and Fastify's hello-world.
 */
import { execFileSync } from 'node:child_process';
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
