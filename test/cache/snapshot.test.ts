/**
 * Snapshots (docs/deployment.md, "What an instance keeps in memory"): a value is at most maxAgeMs
 * old, one load serves concurrent readers, a failed load is not remembered, entries are bounded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Snapshot } from '../../src/cache/snapshot.js';
import { LruMap } from '../../src/cache/lru-map.js';
import type { VerifiedToken } from '../../src/cache/verified-tokens.js';
import { DirectorySnapshot } from '../../src/cache/directory-snapshot.js';
import { FakeClock } from '../helpers/fake-clock.js';

test('Snapshot: a value is served from memory until it is maxAgeMs old, then read again', async () => {
  const time = new FakeClock(1_000);
  let loads = 0;
  const snapshot = new Snapshot(async (key: string) => `${key}-${++loads}`, { maxAgeMs: 1_000, entriesMax: 10, clock: time });
  assert.equal(await snapshot.get('a'), 'a-1');
  time.advance(999);
  assert.equal(await snapshot.get('a'), 'a-1', 'younger than maxAgeMs: no read');
  time.advance(1);
  assert.equal(await snapshot.get('a'), 'a-2', 'maxAgeMs old: read again');
  assert.equal(loads, 2);
});

test('Snapshot.refresh (a refusal reads again): the store is read at once after an ordinary load, and at most once per interval for a flood of refusals', async () => {
  const time = new FakeClock(1_000);
  let loads = 0;
  const snapshot = new Snapshot(async (key: string) => `${key}-${++loads}`, { maxAgeMs: 1_000, entriesMax: 10, clock: time });
  assert.equal(await snapshot.get('a'), 'a-1');
  assert.equal(await snapshot.refresh('a', 100), 'a-2', 'an ordinary load is read again at once: a change made a moment ago is seen');
  for (let refusal = 0; refusal < 50; refusal += 1) assert.equal(await snapshot.refresh('a', 100), 'a-2');
  assert.equal(loads, 2, 'fifty refusals within the interval: no further read');
  time.advance(100);
  assert.equal(await snapshot.refresh('a', 100), 'a-3', 'the interval over: read again');
  assert.equal(await snapshot.get('a'), 'a-3', 'and get answers what the refresh read');
});

test('Snapshot: concurrent readers of one key share one load', async () => {
  let loads = 0;
  // The load is held until every reader has asked: none of them can have been answered by then.
  let release = () => {};
  const held = new Promise<void>((resolve) => (release = resolve));
  const snapshot = new Snapshot(async () => {
    loads += 1;
    await held;
    return 'value';
  }, { maxAgeMs: 1_000, entriesMax: 10, clock: new FakeClock() });
  const reading = Promise.all(Array.from({ length: 20 }, () => snapshot.get('k')));
  release();
  const values = await reading;
  assert.deepEqual(new Set(values), new Set(['value']));
  assert.equal(loads, 1);
});

test('Snapshot: a failed load is not remembered; the next reader tries again', async () => {
  let fail = true;
  const snapshot = new Snapshot(async () => {
    if (fail) throw new Error('store down');
    return 'ok';
  }, { maxAgeMs: 60_000, entriesMax: 10, clock: new FakeClock() });
  await assert.rejects(snapshot.get('k'), /store down/);
  fail = false;
  assert.equal(await snapshot.get('k'), 'ok');
});

test('Snapshot: invalidate(key) forgets one key, invalidate() every key', async () => {
  let loads = 0;
  const snapshot = new Snapshot(async (key: string) => `${key}${++loads}`, { maxAgeMs: 60_000, entriesMax: 10, clock: new FakeClock() });
  await snapshot.get('a');
  await snapshot.get('b');
  snapshot.invalidate('a');
  assert.equal(await snapshot.get('a'), 'a3');
  assert.equal(await snapshot.get('b'), 'b2');
  snapshot.invalidate();
  assert.equal(await snapshot.get('b'), 'b4');
});

test('Snapshot: bounded: past entriesMax the least recently used key is read again', async () => {
  let loads = 0;
  const snapshot = new Snapshot(
    async (key: number) => {
      loads += 1;
      return key;
    },
    { maxAgeMs: 60_000, entriesMax: 2, clock: new FakeClock() },
  );
  await snapshot.get(1);
  await snapshot.get(2);
  await snapshot.get(1);
  await snapshot.get(3); // evicts 2, the least recently used
  const before = loads;
  await snapshot.get(1);
  assert.equal(loads, before, '1 was kept');
  await snapshot.get(2);
  assert.equal(loads, before + 1, '2 was evicted');
});

test('verified tokens: bounded: a flood of distinct tokens evicts the least recently used', () => {
  const tokens = new LruMap<string, VerifiedToken<string>>(3);
  for (const token of ['t1', 't2', 't3']) tokens.set(token, { principal: token, expiresAt: 0, issuedAt: 0 });
  tokens.get('t1');
  tokens.set('t4', { principal: 't4', expiresAt: 0, issuedAt: 0 });
  assert.equal(tokens.size, 3);
  assert.equal(tokens.get('t2'), undefined, 't2 was the least recently used');
  assert.equal(tokens.get('t1')?.principal, 't1');
  tokens.delete('t1');
  assert.equal(tokens.get('t1'), undefined);
});

test('DirectorySnapshot: a user disabled in the core is refused within maxAgeMs; statuses are asked once per login meanwhile', async () => {
  const statuses = new Map<string, 'Active' | 'Disabled'>([['jdoe', 'Active']]);
  let asked = 0;
  const time = new FakeClock();
  const directory = new DirectorySnapshot(
    {
      userStatus: async (login) => {
        asked += 1;
        return statuses.get(login);
      },
      workstationStatus: async () => 'Active',
    },
    time,
    50,
  );
  assert.equal(await directory.userStatus('jdoe'), 'Active');
  statuses.set('jdoe', 'Disabled');
  assert.equal(await directory.userStatus('jdoe'), 'Active', 'within maxAgeMs the snapshot answers');
  assert.equal(asked, 1);
  time.advance(49);
  assert.equal(await directory.userStatus('jdoe'), 'Active', 'still within maxAgeMs');
  time.advance(1);
  assert.equal(await directory.userStatus('jdoe'), 'Disabled', 'past maxAgeMs the core is asked again');
  assert.equal(await directory.userStatus('nobody'), undefined);
});
