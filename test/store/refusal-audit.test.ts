/**
 * Audit records of refused requests in batches (src/audit/refusal-audit.ts; docs/api.md, "Audit"):
 * the refusals of one turn of the event loop are written by one statement in one commit, each is
 * answered only once its record is committed, and chained: as it is written, under the chain's
 * lock, when nothing waits for the chainer, else by the chainer after; two instances racing on one
 * PostgreSQL database keep one unbroken chain.
 */
import { systemClock } from '../../src/clock/system-clock.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import Sqlite from 'better-sqlite3';
import { sql } from 'kysely';
import pg from 'pg';
import { AuditChainer, chainLockTimeoutMs, verifyAuditChain } from '../../src/audit/chain.js';
import { RefusalAudit } from '../../src/audit/refusal-audit.js';
import type { Store } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { auditEntry } from '../../src/operations/operation-audit.js';
import { insertAuditEntries } from '../../src/store/audit.js';
import { storeTargets, withCreatedStore, withStore } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';

function refusal(i: number) {
  return auditEntry({
    operation: 'termDeposit.initiate',
    clientId: 'http://127.0.0.1/realms/sandbox#app',
    backboneUser: null,
    workstation: null,
    correlationId: `refused-${i}`,
    reference: null,
    httpStatus: 400,
    outcome: 'Refused',
    durationMs: 1,
    details: { path: 'POST /v1/term-deposits/initiate', code: 'TD-400-001' },
  }, Date.now());
}

/**
 * Counts the statements that insert audit rows, as the drivers run them (better-sqlite3's
 * statements, pg's client queries), whichever path of the store issued them. `restore()` undoes it.
 */
function countAuditInserts(): { inserts: () => number; restore: () => void } {
  let inserts = 0;
  const isAuditInsert = (text: unknown) => typeof text === 'string' && /^insert into "audit_records"/.test(text);
  const scratch = new Sqlite(':memory:');
  const statementPrototype = Object.getPrototypeOf(scratch.prepare('select 1')) as { run: (...args: unknown[]) => unknown };
  scratch.close();
  const run = statementPrototype.run;
  statementPrototype.run = function (this: { source: string }, ...args: unknown[]) {
    if (isAuditInsert(this.source)) inserts += 1;
    return run.apply(this, args);
  };
  const clientPrototype = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = clientPrototype.query;
  clientPrototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
    if (isAuditInsert(typeof config === 'string' ? config : (config as { text?: string } | undefined)?.text)) inserts += 1;
    return query.call(this, config, ...rest);
  };
  return {
    inserts: () => inserts,
    restore: () => {
      statementPrototype.run = run;
      clientPrototype.query = query;
    },
  };
}

for (const target of storeTargets) {
  test(`refusals arriving together are audited by one statement, each answered once committed, then chained [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await migrateEmbedded(store);
        const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), systemClock);
        const refusals = new RefusalAudit(store, chainer);
        const counter = countAuditInserts();
        const count = async () => Number((await store.db.selectFrom('audit_records').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n);
        // Each caller checks, when answered, that its own record is there.
        const answered = await Promise.all(
          Array.from({ length: 40 }, (_, i) =>
            refusals.record(refusal(i)).then(() => store.db.selectFrom('audit_records').select('id').where('correlation_id', '=', `refused-${i}`).executeTakeFirst()),
          ),
        ).finally(counter.restore);
        assert.ok(answered.every((row) => row !== undefined), 'every refusal was answered after its record was committed');
        assert.equal(await count(), 40);
        assert.ok(counter.inserts() >= 1 && counter.inserts() <= 2, `40 refusals in one or two statements, got ${counter.inserts()}`);
        await chainer.idle();
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 40, unchained: 0 });
      });
    } finally {
      await created.drop();
    }
  });
}

/** A chainer that only counts the runs it was asked for. */
function countingChainer(store: Store): { chainer: AuditChainer; runs: () => number } {
  const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), systemClock);
  let runs = 0;
  const schedule = chainer.schedule.bind(chainer);
  chainer.schedule = () => {
    runs += 1;
    schedule();
  };
  return { chainer, runs: () => runs };
}

for (const target of storeTargets) {
  test(`refusals written while every earlier record is chained are written chained, with no chainer run, and the chain verifies [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await migrateEmbedded(store);
        const { chainer, runs } = countingChainer(store);
        const refusals = new RefusalAudit(store, chainer);
        // Details that change on the way through JSON (an undefined member, a nested object) are hashed as they read back.
        const odd = { ...refusal(0), details: { code: 'TD-400-001', missing: undefined, nested: { b: 2, a: [1, 'x'] } } };
        await Promise.all([refusals.record(odd), ...Array.from({ length: 9 }, (_, i) => refusals.record(refusal(i + 1)))]);
        await refusals.record(refusal(10));
        const rows = await store.db.selectFrom('audit_records').select(['chain_seq']).execute();
        assert.equal(rows.length, 11);
        assert.ok(rows.every((row) => row.chain_seq !== null), 'every record was written with its chain position');
        assert.equal(runs(), 0, 'no chainer run was needed');
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 11, unchained: 0 });
      });
    } finally {
      await created.drop();
    }
  });

  test(`refusals written while an earlier record waits for the chainer are written unchained and chained after it, in order [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await migrateEmbedded(store);
        // A business transaction's record, committed unchained (the chainer has not run yet).
        // Recorded a moment before the refusals: the chainer orders by time (then id, random within a millisecond).
        const earlier = { ...refusal(100), recordedAt: new Date(Date.now() - 1000).toISOString() };
        await store.transaction((trx) => insertAuditEntries(trx, [earlier]));
        const { chainer, runs } = countingChainer(store);
        const refusals = new RefusalAudit(store, chainer);
        await Promise.all(Array.from({ length: 5 }, (_, i) => refusals.record(refusal(i))));
        assert.ok(runs() >= 1, 'the chainer was asked to run');
        await chainer.idle();
        const first = await store.db.selectFrom('audit_records').select(['id', 'chain_seq']).where('chain_seq', '=', 1).executeTakeFirstOrThrow();
        assert.equal(first.id, earlier.id, 'the record that waited first is first in the chain');
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 6, unchained: 0 });
        // Once caught up, the next refusal is written chained again.
        await refusals.record(refusal(200));
        const last = await store.db.selectFrom('audit_records').select(['chain_seq']).where('correlation_id', '=', 'refused-200').executeTakeFirstOrThrow();
        assert.equal(Number(last.chain_seq), 7);
        assert.equal((await verifyAuditChain(store)).ok, true);
      });
    } finally {
      await created.drop();
    }
  });
}

const postgresTarget = storeTargets.find((target) => target.name === 'postgres')!;
const auditChainLockId = 0x61756474; // src/audit/chain.ts

test('PostgreSQL: a chainer that finds the chain locked by another instance waits for it, then chains (it does not give up)', { skip: postgresTarget.skip }, async () => {
  await withCreatedStore(postgresTarget, async (url) => {
    await withStore(url, async (store) => {
      await migrateEmbedded(store);
      // Another instance holds the chain's lock in an open transaction.
      const other = new pg.Client({ connectionString: url });
      await other.connect();
      try {
        await other.query('begin');
        await other.query('select pg_advisory_xact_lock($1)', [auditChainLockId]);
        await store.transaction((trx) => insertAuditEntries(trx, [refusal(1)]));
        const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), systemClock);
        chainer.schedule();
        // Instead of a pause: the chainer's request for the lock is seen waiting behind the other
        // instance's (in pg_locks, in this database), so the assertion below runs while it waits.
        await waitFor(
          "the chainer's wait for the chain lock",
          async () => {
            const waiting = await other.query("select 1 from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database()) and objid = $1 and not granted", [auditChainLockId]);
            return waiting.rowCount ? true : undefined;
          },
          chainLockTimeoutMs,
        );
        assert.equal((await verifyAuditChain(store)).unchained, 1, 'nothing chained while the other instance holds the lock');
        await other.query('commit');
        await chainer.idle();
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 1, unchained: 0 });
      } finally {
        await other.end();
      }
    });
  });
});

test('PostgreSQL: two instances racing refusal batches and business records on one database keep one unbroken chain, nothing left unchained', { skip: postgresTarget.skip }, async () => {
  await withCreatedStore(postgresTarget, async (url) => {
    await withStore(url, async (first) => {
      await migrateEmbedded(first);
      await withStore(url, async (second) => {
        const instances = [first, second].map((store) => {
          const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), systemClock);
          return { store, chainer, refusals: new RefusalAudit(store, chainer) };
        });
        let next = 0;
        // Each instance: waves of refusals arriving together, with a business transaction's record
        // (inserted unchained, then the chainer asked to run, as operation-audit.ts does) among them.
        await Promise.all(
          instances.map(async ({ store, chainer, refusals }) => {
            for (let wave = 0; wave < 15; wave++) {
              const business = store.transaction((trx) => insertAuditEntries(trx, [refusal(next++)])).then(() => chainer.schedule());
              await Promise.all([business, ...Array.from({ length: 12 }, () => refusals.record(refusal(next++)))]);
            }
          }),
        );
        for (const { chainer } of instances) await chainer.idle();
        const total = 2 * 15 * 13;
        const chain = await verifyAuditChain(first);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: total, unchained: 0 }, JSON.stringify(chain.problem));
        const counts = await first.db
          .selectFrom('audit_records')
          .select((eb) => [eb.fn.countAll<string>().as('rows'), eb.fn.count<string>('chain_seq').distinct().as('positions'), eb.fn.max('chain_seq').as('last')])
          .executeTakeFirstOrThrow();
        assert.deepEqual([Number(counts.rows), Number(counts.positions), Number(counts.last)], [total, total, total], 'one position for every record, none skipped');
      });
    });
  });
});

test('PostgreSQL: refusals whose chain lock is held past its time-out (a hung instance) are written unchained and answered, then chained once it is free', { skip: postgresTarget.skip }, async () => {
  await withCreatedStore(postgresTarget, async (url) => {
    await withStore(url, async (store) => {
      await migrateEmbedded(store);
      const hung = new pg.Client({ connectionString: url });
      await hung.connect();
      try {
        await hung.query('begin');
        await hung.query('select pg_advisory_xact_lock($1)', [auditChainLockId]);
        const chainerErrors: unknown[] = [];
        const chainer = new AuditChainer(store, (error) => chainerErrors.push(error), systemClock);
        const refusals = new RefusalAudit(store, chainer, { lockTimeoutMs: 200 });
        // Answered (committed) although the lock never came: the refusal is not stalled behind the hung holder.
        await Promise.all([1, 2, 3].map((i) => refusals.record(refusal(i))));
        const stored = await store.db.selectFrom('audit_records').select(['correlation_id', 'chain_seq']).orderBy('correlation_id').execute();
        assert.deepEqual(
          stored.map((row) => [row.correlation_id, row.chain_seq]),
          [['refused-1', null], ['refused-2', null], ['refused-3', null]],
          'committed, unchained, for the chainer',
        );
        await hung.query('rollback');
        // The chainer the batch asked for may have timed out on the lock too (reported); the next run chains.
        await chainer.idle();
        chainer.schedule();
        await chainer.idle();
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 3, unchained: 0 });
        for (const error of chainerErrors) assert.equal((error as { code?: string }).code, '55P03', 'only the lock time-out is reported');
      } finally {
        await hung.end();
      }
    });
  });
});

test('PostgreSQL: transactions run under READ COMMITTED even when the database defaults to REPEATABLE READ (the chain reads the previous lock holder\'s commit)', { skip: postgresTarget.skip }, async () => {
  await withCreatedStore(postgresTarget, async (url) => {
    const name = new URL(url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`alter database ${name} set default_transaction_isolation = 'repeatable read'`);
    } finally {
      await admin.end();
    }
    await withStore(url, async (store) => {
      await migrateEmbedded(store);
      const isolation = await store.transaction(async (trx) => (await sql<{ transaction_isolation: string }>`show transaction_isolation`.execute(trx)).rows[0]!.transaction_isolation);
      assert.equal(isolation, 'read committed');
      // Two instances' refusal batches queue on the chain's lock: each must read the head its predecessor committed.
      await withStore(url, async (second) => {
        const instances = [store, second].map((s) => {
          const chainer = new AuditChainer(s, (error) => assert.fail(String(error)), systemClock);
          return { chainer, refusals: new RefusalAudit(s, chainer) };
        });
        let next = 0;
        await Promise.all(instances.map(async ({ refusals }) => {
          for (let wave = 0; wave < 10; wave++) await Promise.all(Array.from({ length: 8 }, () => refusals.record(refusal(next++))));
        }));
        for (const { chainer } of instances) await chainer.idle();
        const chain = await verifyAuditChain(store);
        assert.deepEqual({ ok: chain.ok, chained: chain.chained, unchained: chain.unchained }, { ok: true, chained: 160, unchained: 0 }, JSON.stringify(chain.problem));
      });
    });
  });
});
