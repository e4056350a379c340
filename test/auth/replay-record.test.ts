/**
 * The one-time use of client assertions and DPoP proofs (src/auth/replay-record.ts, CONTRACT
 * §13): a use is accepted once while it has not expired, on every store; an expired one may be
 * taken again (its assertion or proof is refused by its own times by then), and expired rows are
 * deleted, at most once a minute, by the use that finds them due. On a fake clock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { replayKey, replayPruneIntervalMs, StoreReplayRecord } from '../../src/auth/replay-record.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { storeTargets, withCreatedStore, withStore } from '../helpers/stores.js';

for (const target of storeTargets) {
  test(`CONTRACT §13: a jti is used once while unexpired; after its time it may be taken again, and expired rows are pruned [${target.name}]`, { skip: target.skip }, async () => {
    await withCreatedStore(target, (url) =>
      withStore(url, async (store) => {
        await migrateToLatest(store); // a no-op on the run's migrated copy; a file run alone starts empty
        const clock = new FakeClock();
        const record = new StoreReplayRecord(store, clock);
        const mark = { parts: ['dpop', 'thumbprint', 'jti-1'], expiresEpochMs: clock.now() + 70_000 };
        assert.equal(await record.firstUse(mark), true);
        assert.equal(await record.firstUse(mark), false, 'a replay');
        assert.equal(await record.firstUse({ ...mark, parts: ['dpop', 'other-key', 'jti-1'] }), true, 'the same jti of another key is another use');
        // Two uses racing: the database lets one of them win.
        const racing = { parts: ['client-assertion', 'realm', 'client', 'jti-2'], expiresEpochMs: clock.now() + 60_000 };
        assert.deepEqual((await Promise.all([record.firstUse(racing), record.firstUse(racing), record.firstUse(racing)])).filter(Boolean).length, 1);

        clock.advance(70_001);
        assert.equal(await record.firstUse({ ...mark, expiresEpochMs: clock.now() + 70_000 }), true, 'expired: taken again');
        await record.pruned();
        const rows = await store.db.selectFrom('replay_records').select('key').execute();
        assert.ok(!rows.some((row) => row.key === replayKey(racing.parts)), 'the expired assertion\'s row was pruned');
        assert.ok(replayPruneIntervalMs <= 60_000);
      }),
    );
  });
}

test('replayKey: the parts\' boundaries count ("ab","c" is not "a","bc")', () => {
  assert.notEqual(replayKey(['ab', 'c']), replayKey(['a', 'bc']));
  assert.match(replayKey(['dpop', 'k', 'j']), /^[0-9a-f]{64}$/);
});
