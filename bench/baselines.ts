/**
 * What the same machine does, measured in the same run: jose signing on every core, a
 * TPC-B-like transfer on better-sqlite3 (WAL, synchronous=FULL), pgbench's TPC-B on the same
 * PostgreSQL with the same connection count, and Fastify's hello-world.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';

export async function joseSigningPerSecond(alg: 'RS256' | 'ES256', seconds: number): Promise<number> {
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
  return Math.round(counts.reduce((sum, count) => sum + count, 0) / seconds);
}

/**
 * TPC-B's transaction on the embedded store coregate uses: debit an account, read it back,
 * credit a teller and a branch, append a history row; one commit, made durable, each time.
 */
export function sqliteTransfersPerSecond(dir: string, seconds: number): number {
  const db = new Database(join(dir, 'tpcb.db'));
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
    const deadline = performance.now() + seconds * 1000;
    let done = 0;
    while (performance.now() < deadline) {
      transfer(1 + ((done * 7919) % accountsCount), 1 + (done % 10), 5);
      done += 1;
    }
    return Math.round(done / seconds);
  } finally {
    db.close();
  }
}

/** pgbench's TPC-B (scale 1) in a scratch database, with the bench's connection count. */
export function pgbenchTps(databaseUrl: string, connections: number, seconds: number): number {
  execFileSync('pgbench', ['-i', '-s', '1', '-q', databaseUrl], { stdio: 'pipe' });
  const output = execFileSync('pgbench', ['-n', '-c', String(connections), '-j', String(availableParallelism()), '-T', String(Math.max(1, Math.round(seconds))), databaseUrl], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tps = /tps = ([\d.]+)/.exec(output)?.[1];
  if (tps === undefined) throw new Error(`pgbench printed no tps:\n${output}`);
  return Math.round(Number(tps));
}
