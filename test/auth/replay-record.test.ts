/**
 * The one-time use of client assertions and DPoP proofs (src/auth/replay-record.ts,
 * docs/auth.md, "The replay record"): a use is accepted once while it has not expired, on
 * every store; an expired one may be taken again (its assertion or proof is refused by its own
 * times by then), and expired rows are deleted. A request's uses are recorded all or none. The
 * record is written without a sync (issue 42), and its horizon closes what that can lose: after
 * PostgreSQL emptied its unlogged tables (a crash, a promotion), or on SQLite after another boot of
 * the machine, a use that could have been accepted before the horizon is refused. On a fake clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sql } from 'kysely';
import { replayKey, replayPruneIntervalMs, StoreReplayRecord, type ReplayMark } from '../../src/auth/replay-record.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { applyMigrations, apiMigrationList as apiMigrations, migrateToLatest } from '../../src/store/migrate.js';
import { storeTargets, withCreatedStore, withStore } from '../helpers/stores.js';
import type { Store } from '../../src/store/connect.js';

/** A proof's use, made `ageMs` ago (acceptable from 10 s before that), kept 70 s. */
function proofMark(clock: FakeClock, jti: string, key = 'thumbprint', ageMs = 0): ReplayMark {
  const iat = clock.now() - ageMs;
  return { parts: ['dpop', key, jti], expiresEpochMs: iat + 70_000, acceptableFromEpochMs: iat - 10_000 };
}

/** The keys the record holds: PostgreSQL's one table, or SQLite's two generations (migration 0013). */
async function recordedKeys(store: Store): Promise<string[]> {
  if (store.dialect === 'postgres') return (await store.db.selectFrom('replay_records').select('key').execute()).map((row) => row.key);
  const { rows } = await sql<{ key: string }>`select lower(hex(key)) as key from replay_uses_0 union all select lower(hex(key)) from replay_uses_1`.execute(store.db);
  return rows.map((row) => row.key);
}

for (const target of storeTargets) {
  test(`a jti is used once while unexpired; after its time it may be taken again, and expired rows are pruned [${target.name}]`, { skip: target.skip }, async () => {
    await withCreatedStore(target, (url) =>
      withStore(url, async (store) => {
        await migrateToLatest(store); // a no-op on the run's migrated copy; a file run alone starts empty
        const clock = new FakeClock();
        const record = new StoreReplayRecord(store, clock, { bootId: 'boot-1' });
        const mark = proofMark(clock, 'jti-1');
        assert.equal(await record.firstUse(mark), true);
        assert.deepEqual(await record.record([mark]), { recorded: false, index: 0, reason: 'used' }, 'a replay');
        assert.equal(await record.firstUse({ ...mark, parts: ['dpop', 'other-key', 'jti-1'] }), true, 'the same jti of another key is another use');
        // Two uses racing: the database lets one of them win.
        const racing = { parts: ['client-assertion', 'realm', 'client', 'jti-2'], expiresEpochMs: clock.now() + 60_000, acceptableFromEpochMs: clock.now() - 300_000 };
        assert.deepEqual((await Promise.all([record.firstUse(racing), record.firstUse(racing), record.firstUse(racing)])).filter(Boolean).length, 1);

        clock.advance(70_001);
        assert.equal(await record.firstUse({ ...mark, expiresEpochMs: clock.now() + 70_000 }), true, 'expired: taken again');
        // A second write: on SQLite the first one after the expiry may have made the emptied
        // generation current, and the next one empties the generation that held the expired uses.
        assert.equal(await record.firstUse(proofMark(clock, 'jti-3')), true);
        await record.pruned();
        assert.ok(!(await recordedKeys(store)).includes(replayKey(racing.parts)), 'the expired assertion\'s row was deleted');
        assert.ok(replayPruneIntervalMs <= 60_000);
      }),
    );
  });

  test(`a request's uses are recorded all or none: a replayed one leaves the others unused, and says which it was [${target.name}]`, { skip: target.skip }, async () => {
    await withCreatedStore(target, (url) =>
      withStore(url, async (store) => {
        await migrateToLatest(store);
        const clock = new FakeClock();
        const record = new StoreReplayRecord(store, clock, { bootId: 'boot-1' });
        const assertion: ReplayMark = { parts: ['client-assertion', 'realm', 'client', 'a-1'], expiresEpochMs: clock.now() + 70_000, acceptableFromEpochMs: clock.now() - 10_000 };
        const usedProof = proofMark(clock, 'p-used');
        assert.equal(await record.firstUse(usedProof), true);
        const freshProof = proofMark(clock, 'p-fresh');
        assert.deepEqual(await record.record([assertion, usedProof]), { recorded: false, index: 1, reason: 'used' }, 'the proof was the replay');
        assert.deepEqual(await record.record([assertion, freshProof]), { recorded: true }, 'the assertion was left unused by the refused request');
        assert.deepEqual(await record.record([assertion, proofMark(clock, 'p-other')]), { recorded: false, index: 0, reason: 'used' }, 'the assertion is named first');
        assert.equal(await record.firstUse(proofMark(clock, 'p-other')), true, 'and the refused request\'s proof stays unused');
        // Two requests sharing an assertion, at once: exactly one is recorded.
        const shared: ReplayMark = { ...assertion, parts: ['client-assertion', 'realm', 'client', 'a-2'] };
        const verdicts = await Promise.all([record.record([shared, proofMark(clock, 'r-1')]), record.record([shared, proofMark(clock, 'r-2')])]);
        assert.equal(verdicts.filter((verdict) => verdict.recorded).length, 1, JSON.stringify(verdicts));
      }),
    );
  });

  test(`two instances racing with uses in common: each use is recorded once, and the request that loses on one use leaves its others free (all or none) [${target.name}]`, { skip: target.skip }, async () => {
    await withCreatedStore(target, (url) =>
      withStore(url, (storeA) =>
        withStore(url, async (storeB) => {
          await migrateToLatest(storeA);
          const clock = new FakeClock();
          // Two instances: two connections (pools) to one database, each with its own record.
          const a = new StoreReplayRecord(storeA, clock, { bootId: 'boot-1' });
          const b = new StoreReplayRecord(storeB, clock, { bootId: 'boot-1' });
          const assertionMark = (name: string): ReplayMark => ({ parts: ['client-assertion', 'realm', 'client', name], expiresEpochMs: clock.now() + 70_000, acceptableFromEpochMs: clock.now() - 10_000 });
          for (let round = 0; round < 20; round++) {
            const proof = proofMark(clock, `shared-${round}`);
            const [mine, theirs] = [assertionMark(`a-${round}`), assertionMark(`b-${round}`)];
            const verdicts = await Promise.all([a.record([mine, proof]), b.record([theirs, proof])]);
            const won = verdicts.findIndex((verdict) => verdict.recorded);
            assert.ok(won >= 0, JSON.stringify(verdicts));
            assert.deepEqual(verdicts[1 - won], { recorded: false, index: 1, reason: 'used' }, `round ${round}: the proof was the replay`);
            assert.equal(await (won === 0 ? a : b).firstUse(won === 0 ? theirs : mine), true, `round ${round}: the losing request's assertion is free`);
            // The same use on both at once, many times over: one of each pair.
            const same = proofMark(clock, `same-${round}`);
            const both = await Promise.all([a.firstUse(same), b.firstUse(same), a.firstUse(same), b.firstUse(same)]);
            assert.equal(both.filter(Boolean).length, 1, `round ${round}: ${JSON.stringify(both)}`);
          }
        }),
      ),
    );
  });
}

const [sqlite, postgres] = storeTargets as [(typeof storeTargets)[number], (typeof storeTargets)[number]];

test('PostgreSQL: the records and the horizon are unlogged; once emptied (a crash, a promotion), the next use starts a horizon at its time and refuses what could have been accepted before', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, (url) =>
    withStore(url, async (store) => {
      await migrateToLatest(store);
      const { rows } = await sql<{ relname: string; relpersistence: string }>`select relname, relpersistence from pg_class where relname in ('replay_records', 'replay_horizon')`.execute(store.db);
      assert.deepEqual(Object.fromEntries(rows.map((row) => [row.relname, row.relpersistence])), { replay_records: 'u', replay_horizon: 'u' }, 'u: unlogged');
      const clock = new FakeClock();
      const record = new StoreReplayRecord(store, clock);
      assert.equal(await record.horizon(), 0, 'a new database: every use so far was durable (there was none)');
      const before = proofMark(clock, 'used-before-the-crash');
      assert.equal(await record.firstUse(before), true);
      // What PostgreSQL does to unlogged tables at the end of crash recovery and on promotion.
      await sql`truncate replay_records, replay_horizon`.execute(store.db);
      clock.advance(5_000);
      assert.deepEqual(await record.record([before]), { recorded: false, index: 0, reason: 'before-horizon' }, 'its record is lost, and the horizon refuses it');
      assert.equal(await record.horizon(), clock.now(), 'the horizon started at the use that found none');
      assert.deepEqual(await record.record([proofMark(clock, 'made-at-the-restart')]), { recorded: false, index: 0, reason: 'before-horizon' }, 'acceptable 10 s before its iat: before the horizon');
      clock.advance(10_000);
      assert.equal(await record.firstUse(proofMark(clock, 'made-10-s-later')), true);
    }),
  );
});

test('SQLite: another boot of the machine moves the horizon to the process\'s start; a process of the same boot keeps it (its records survived the process)', { skip: sqlite.skip }, async () => {
  await withCreatedStore(sqlite, (url) =>
    withStore(url, async (store) => {
      await migrateToLatest(store);
      const clock = new FakeClock();
      const first = new StoreReplayRecord(store, clock, { bootId: 'boot-a', startedAtEpochMs: clock.now() });
      const used = proofMark(clock, 'used-in-boot-a');
      assert.equal(await first.firstUse(used), true);
      assert.equal(await first.horizon(), 0);
      clock.advance(2_000);
      const restarted = new StoreReplayRecord(store, clock, { bootId: 'boot-a', startedAtEpochMs: clock.now() });
      assert.equal(await restarted.horizon(), 0, 'the same boot: nothing was lost');
      assert.deepEqual(await restarted.record([used]), { recorded: false, index: 0, reason: 'used' });
      clock.advance(2_000);
      const rebooted = new StoreReplayRecord(store, clock, { bootId: 'boot-b', startedAtEpochMs: clock.now() });
      assert.equal(await rebooted.horizon(), clock.now(), 'another boot: the process\'s start');
      assert.deepEqual(await rebooted.record([{ ...used, parts: ['dpop', 'thumbprint', 'lost-in-the-crash'] }]), { recorded: false, index: 0, reason: 'before-horizon' });
      const later = new StoreReplayRecord(store, clock, { bootId: 'boot-b', startedAtEpochMs: clock.now() + 60_000 });
      assert.equal(await later.horizon(), clock.now(), 'a second process of that boot keeps the first one\'s horizon');
      clock.advance(10_000);
      assert.equal(await rebooted.firstUse(proofMark(clock, 'made-after-the-horizon')), true);
      const unknownBoot = new StoreReplayRecord(store, clock, { startedAtEpochMs: clock.now() });
      assert.equal(await unknownBoot.horizon(), clock.now(), 'where no boot id is known, after uses written unsynced: the process\'s start');
    }),
  );
});

test('SQLite: the uses live in two generations of tables (migration 0013); a use is refused from either while unexpired, and a generation is emptied whole only once every use in it has expired', { skip: sqlite.skip }, async () => {
  await withCreatedStore(sqlite, (url) =>
    withStore(url, async (store) => {
      await migrateToLatest(store);
      const clock = new FakeClock();
      const start = clock.now();
      const record = new StoreReplayRecord(store, clock, { bootId: 'boot-1', startedAtEpochMs: start });
      const proof = proofMark(clock, 'kept-70-s');
      const assertion: ReplayMark = { parts: ['client-assertion', 'realm', 'client', 'kept-200-s'], expiresEpochMs: start + 200_000, acceptableFromEpochMs: start - 10_000 };
      assert.equal(await record.firstUse(proof), true);
      clock.advance(1_000);
      assert.equal(await record.firstUse(assertion), true, 'a write after the first: the empty generation became the current one');
      const generationOf = async (key: string) => {
        const { rows } = await sql<{ generation: number }>`select 0 as generation from replay_uses_0 where key = unhex(${key}) union all select 1 from replay_uses_1 where key = unhex(${key})`.execute(store.db);
        return rows.map((row) => row.generation);
      };
      const [proofGeneration, assertionGeneration] = [await generationOf(replayKey(proof.parts)), await generationOf(replayKey(assertion.parts))];
      assert.equal(proofGeneration.length, 1);
      assert.notDeepEqual(proofGeneration, assertionGeneration, 'the two uses sit in different generations');
      clock.advance(1_000);
      assert.deepEqual(await record.record([proof]), { recorded: false, index: 0, reason: 'used' }, 'refused from the older generation');
      clock.advance(69_000);
      assert.equal(await record.firstUse(proofMark(clock, 'after-the-proof-expired')), true, 'the proof\'s generation expired whole: emptied, and current again');
      assert.deepEqual(await generationOf(replayKey(proof.parts)), [], 'the expired proof went with its generation');
      assert.deepEqual(await record.record([assertion]), { recorded: false, index: 0, reason: 'used' }, 'the unexpired assertion is still refused, from the other generation');
      clock.advance(60_000);
      assert.equal(await record.firstUse(proofMark(clock, 'before-the-assertion-expired')), true);
      assert.deepEqual(await generationOf(replayKey(assertion.parts)), assertionGeneration, 'a generation holding one unexpired use is kept whole');
      clock.advance(70_000);
      assert.equal(await record.firstUse(proofMark(clock, 'after-the-assertion-expired')), true);
      assert.deepEqual(await generationOf(replayKey(assertion.parts)), [], 'once its every use expired, emptied');
    }),
  );
});

test('SQLite: a use recorded before migration 0013 (the one table) is still refused after it (the two generations)', { skip: sqlite.skip }, async () => {
  await withCreatedStore(
    sqlite,
    (url) =>
      withStore(url, async (store) => {
      const upTo = (last: string) => Object.fromEntries(Object.entries(apiMigrations).filter(([name]) => name <= last));
      await applyMigrations(store, { migrations: upTo('0012_replay_records_unsynced') });
      const clock = new FakeClock();
      const used = proofMark(clock, 'used-before-the-upgrade');
      await sql`insert into replay_records (key, expires_epoch_ms) values (${replayKey(used.parts)}, ${used.expiresEpochMs})`.execute(store.db);
      await applyMigrations(store, { migrations: upTo('0013_replay_generations') });
      const record = new StoreReplayRecord(store, clock, { bootId: 'boot-1', startedAtEpochMs: clock.now() });
      assert.deepEqual(await record.record([used]), { recorded: false, index: 0, reason: 'used' });
      assert.equal(await record.firstUse(proofMark(clock, 'a-new-one')), true);
      }),
    { empty: true },
  );
});

test('replayKey: the parts\' boundaries count ("ab","c" is not "a","bc")', () => {
  assert.notEqual(replayKey(['ab', 'c']), replayKey(['a', 'bc']));
  assert.match(replayKey(['dpop', 'k', 'j']), /^[0-9a-f]{64}$/);
});
