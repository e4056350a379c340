/**
 * The audit spool (src/audit/audit-spool.ts, its drain src/audit/audit-spool-drain.ts, and the
 * refusal audit that routes to it, src/audit/refusal-audit.ts; docs/api.md "Audit"): records are
 * appended durably to files of mode 0600, bounded, drained into the audit table in the order they
 * were kept and chained, files of processes that died are claimed (never those of a live one or of
 * another database), and a line cut by a crash is skipped. The crash of a drain in its middle is
 * test/audit/audit-spool-crash.test.ts (a real process killed).
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, test } from 'node:test';
import { AuditSpool, AuditSpoolFull, auditSpoolBytesMax, auditSpoolRecordsMax } from '../../src/audit/audit-spool.js';
import { socketAddress, socketPathBytesMax } from '../../src/audit/liveness-socket.js';
import { resolveConfig } from '../../src/config.js';
import { startCoregate } from '../../src/main.js';
import { Writable } from 'node:stream';
import { runSigningKeys } from '../helpers/signing-keys.js';
import { AuditSpoolDrain } from '../../src/audit/audit-spool-drain.js';
import { AuditChainer, verifyAuditChain } from '../../src/audit/chain.js';
import { RefusalAudit } from '../../src/audit/refusal-audit.js';
import { auditEntry } from '../../src/operations/operation-audit.js';
import { insertAuditEntriesOnce, listChained, type AuditEntry } from '../../src/store/audit.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { tempDirectory } from '../helpers/data-files.js';
import { FakeClock } from '../helpers/fake-clock.js';
import type { Logger } from '../../src/log.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';

const databaseId = '0123456789abcdef';
/** Every directory of this file's tests, under one temporary directory (removed at exit). */
const root = tempDirectory('coregate-spool-test-');
let directories = 0;
function newDirectory(): string {
  const directory = join(root, String((directories += 1)));
  mkdirSync(directory);
  return directory;
}
const quietLogger: Pick<Logger, 'info' | 'warn' | 'error'> = { info: () => {}, warn: () => {}, error: () => {} };

function refusal(clock: FakeClock, correlationId: string, httpStatus = 503): AuditEntry {
  const entry = auditEntry(
    {
      operation: 'termDeposit.initiate',
      clientId: 'http://127.0.0.1/realms/sandbox#treasury-app',
      backboneUser: null,
      workstation: null,
      correlationId,
      reference: null,
      httpStatus,
      outcome: 'Refused',
      durationMs: 3,
      details: { path: 'POST /v1/term-deposits/initiate', code: 'TD-503-001' },
    },
    clock.now(),
  );
  clock.advance(1);
  return entry;
}

/** A migrated SQLite store in a directory of its own; closed after its test. */
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});
async function newStore(): Promise<Store> {
  const store = await openStore(`sqlite:${join(newDirectory(), 'coregate.db')}`);
  stores.push(store);
  await migrateEmbedded(store);
  return store;
}

function drainOf(spool: AuditSpool, store: Store, clock: FakeClock, chainer = new AuditChainer(store, (error) => assert.fail(String(error)), clock)) {
  return { chainer, drain: new AuditSpoolDrain({ spool, append: (entries) => insertAuditEntriesOnce(store.db, entries), chainer, clock, logger: quietLogger }) };
}

async function chainedCorrelations(store: Store): Promise<Array<string | null>> {
  return (await listChained(store.db, 0, 10_000)).map((entry) => entry.correlationId);
}

const spoolFiles = (directory: string) => readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort();

describe('the audit spool', () => {
  test('the bounds are named constants: 100,000 records and 64 MiB per process', () => {
    assert.equal(auditSpoolRecordsMax, 100_000);
    assert.equal(auditSpoolBytesMax, 64 * 1024 * 1024);
  });

  test('records are appended to a file of mode 0600, one JSON record per line, each call answered once on disk; the directory is made 0700', async () => {
    const clock = new FakeClock();
    const directory = join(newDirectory(), 'spool');
    const spool = await AuditSpool.open({ directory, databaseId });
    try {
      assert.equal(statSync(directory).mode & 0o777, 0o700);
      assert.equal(spool.holdsRecords, false);
      const entries = [refusal(clock, 'a'), refusal(clock, 'b'), refusal(clock, 'c')];
      // Three calls at once share one write and one fsync; each is answered when its record is on disk.
      await Promise.all(entries.map((entry) => spool.keep([entry])));
      const [file, ...others] = spoolFiles(directory);
      assert.equal(others.length, 0);
      assert.match(file ?? '', new RegExp(`^audit-${databaseId}-[0-9a-f]{12}-00000001\\.jsonl$`));
      const path = join(directory, file ?? '');
      assert.equal(statSync(path).mode & 0o777, 0o600, 'only the owner reads the spool');
      const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
      assert.deepEqual(lines.map((line) => (JSON.parse(line) as AuditEntry).correlationId), ['a', 'b', 'c']);
      assert.deepEqual(JSON.parse(lines[0] ?? ''), entries[0], 'the record as the audit table holds it, nothing more');
      assert.equal(spool.holdsRecords, true);
      clock.advance(60_000);
      const stats = spool.stats(clock.now());
      assert.equal(stats.records, 3);
      assert.equal(stats.bytes, statSync(path).size);
      assert.equal(stats.oldestAgeSeconds, (clock.now() - Date.parse(entries[0]?.recordedAt ?? '')) / 1000);
    } finally {
      await spool.close();
    }
  });

  test('bounded: a record past the records bound (or the bytes bound) is refused with AuditSpoolFull and the spool says full until a drain frees room', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const directory = newDirectory();
    const spool = await AuditSpool.open({ directory, databaseId, bounds: { recordsMax: 3 } });
    try {
      await spool.keep([refusal(clock, 'one'), refusal(clock, 'two')]);
      assert.equal(spool.full, false);
      await assert.rejects(spool.keep([refusal(clock, 'three'), refusal(clock, 'four')]), AuditSpoolFull, 'two more do not fit: neither is kept');
      assert.equal(spool.full, true, 'a record was refused: full until a drain');
      assert.equal(spool.stats(clock.now()).records, 2);
      const { drain, chainer } = drainOf(spool, store, clock);
      await drain.runOnce();
      await chainer.idle();
      assert.equal(spool.full, false);
      assert.equal(spool.holdsRecords, false);
      assert.deepEqual(await chainedCorrelations(store), ['one', 'two']);
    } finally {
      await spool.close();
    }
    const bytes = await AuditSpool.open({ directory: newDirectory(), databaseId, bounds: { bytesMax: 600 } });
    try {
      await bytes.keep([refusal(clock, 'fits')]);
      await assert.rejects(bytes.keep([refusal(clock, 'too-many-bytes')]), AuditSpoolFull);
      assert.equal(bytes.full, true);
    } finally {
      await bytes.close();
    }
  });

  test('drained in the order kept, across files sealed while records kept arriving; the records are chained and the chain verifies; the files are removed', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const directory = newDirectory();
    const spool = await AuditSpool.open({ directory, databaseId });
    try {
      const kept: string[] = [];
      for (let index = 0; index < 450; index += 1) kept.push(`first-${index}`);
      await Promise.all(kept.map((id) => spool.keep([refusal(clock, id)])));
      // A drain seals the file; records kept meanwhile go to the next file, drained after it.
      const { drain, chainer } = drainOf(spool, store, clock);
      const draining = drain.runOnce();
      const later = ['later-1', 'later-2'];
      await Promise.all(later.map((id) => spool.keep([refusal(clock, id)])));
      await draining;
      await drain.runOnce();
      await chainer.idle();
      assert.deepEqual(await chainedCorrelations(store), [...kept, ...later]);
      const verified = await verifyAuditChain(store);
      assert.deepEqual({ ok: verified.ok, chained: verified.chained, unchained: verified.unchained }, { ok: true, chained: 452, unchained: 0 });
      assert.deepEqual(spoolFiles(directory), [], 'drained files are removed');
      assert.equal(spool.stats(clock.now()).records, 0);
    } finally {
      await spool.close();
    }
  });

  test('a drain that meets an outage leaves every record in place and the next pass appends them; nothing twice', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const spool = await AuditSpool.open({ directory: newDirectory(), databaseId });
    try {
      await Promise.all(Array.from({ length: 5 }, (_, index) => spool.keep([refusal(clock, `r${index}`)])));
      let down = true;
      let calls = 0;
      const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), clock);
      const drain = new AuditSpoolDrain({
        spool,
        append: async (entries) => {
          calls += 1;
          if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
          await insertAuditEntriesOnce(store.db, entries);
        },
        chainer,
        clock,
        logger: quietLogger,
      });
      await drain.runOnce();
      assert.equal(calls, 1);
      assert.equal(spool.stats(clock.now()).records, 5, 'kept while the database is down');
      down = false;
      await drain.runOnce();
      await chainer.idle();
      assert.deepEqual(await chainedCorrelations(store), ['r0', 'r1', 'r2', 'r3', 'r4']);
      assert.equal(spool.holdsRecords, false);
    } finally {
      await spool.close();
    }
  });

  test('the files of a process that died are claimed and drained; a live process\'s are not, nor another database\'s; a line cut by a crash is skipped', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const directory = newDirectory();
    const dead = await AuditSpool.open({ directory, databaseId });
    await dead.keep([refusal(clock, 'dead-1'), refusal(clock, 'dead-2')]);
    // Closed: its socket is gone, as a killed process's stops answering (test/audit/audit-spool-crash.test.ts kills one).
    await dead.close();
    const [deadFile] = spoolFiles(directory);
    // A write the crash cut: part of a line, never acknowledged.
    appendFileSync(join(directory, deadFile ?? ''), '{"id":"0199-cut-off","recordedAt":"2026-03');
    const live = await AuditSpool.open({ directory, databaseId });
    await live.keep([refusal(clock, 'live-1')]);
    const otherDatabase = 'fedcba9876543210';
    writeFileSync(join(directory, `audit-${otherDatabase}-aaaaaaaaaaaa-00000001.jsonl`), `${JSON.stringify(refusal(clock, 'foreign'))}\n`, { mode: 0o600 });
    const warnings: string[] = [];
    const claimant = await AuditSpool.open({ directory, databaseId });
    try {
      const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), clock);
      const drain = new AuditSpoolDrain({
        spool: claimant,
        append: (entries) => insertAuditEntriesOnce(store.db, entries),
        chainer,
        clock,
        logger: { ...quietLogger, warn: ((_: unknown, message?: string) => void warnings.push(message ?? '')) as typeof quietLogger.warn },
      });
      await drain.runOnce();
      await chainer.idle();
      assert.deepEqual(await chainedCorrelations(store), ['dead-1', 'dead-2'], 'the dead owner\'s records, the cut line skipped');
      assert.ok(warnings.some((message) => /not a whole record/.test(message)), warnings.join('\n'));
      assert.ok(warnings.some((message) => /another database/.test(message)), warnings.join('\n'));
      const left = readdirSync(directory);
      assert.ok(left.includes(`audit-${otherDatabase}-aaaaaaaaaaaa-00000001.jsonl`), 'another database\'s file is left');
      assert.equal(left.filter((name) => name.endsWith('.jsonl') && name.includes(databaseId)).length, 1, 'the live owner\'s file is left');
      assert.equal(live.stats(clock.now()).records, 1);
      assert.equal(left.filter((name) => name.endsWith('.sock')).length, 2, 'the dead owner\'s socket went; the live two remain');
    } finally {
      await claimant.close();
      await live.close();
    }
  });

  test('the refusal audit: a write that fails as an outage goes to the spool (answered once kept); while the spool holds records new ones follow them there; after the drain they go to the database again, in order in the chain', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    let down = false;
    const outage = () => Object.assign(new Error('Connection terminated unexpectedly'), {});
    const faulty: Store = { ...store, transaction: ((work) => (down ? Promise.reject(outage()) : store.transaction(work))) as Store['transaction'] };
    const spool = await AuditSpool.open({ directory: newDirectory(), databaseId });
    const lost: string[] = [];
    try {
      const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), clock);
      const refusals = new RefusalAudit(faulty, chainer, { spool, onLost: (reason) => lost.push(reason) });
      await refusals.record(refusal(clock, 'before'));
      down = true;
      await Promise.all([refusals.record(refusal(clock, 'during-1')), refusals.record(refusal(clock, 'during-2'))]);
      assert.equal(spool.stats(clock.now()).records, 2, 'kept in the spool, durably, before being answered');
      down = false;
      // The database answers again, but the spool holds records: this one goes behind them.
      await refusals.record(refusal(clock, 'after-1'));
      assert.equal(spool.stats(clock.now()).records, 3);
      const { drain } = drainOf(spool, store, clock, chainer);
      await drain.runOnce();
      await refusals.record(refusal(clock, 'after-2'));
      assert.equal(spool.holdsRecords, false, 'the spool is empty: new records go to the database');
      await refusals.idle();
      await chainer.idle();
      assert.deepEqual(await chainedCorrelations(store), ['before', 'during-1', 'during-2', 'after-1', 'after-2']);
      assert.equal((await verifyAuditChain(store)).ok, true);
      assert.deepEqual(lost, []);
    } finally {
      await spool.close();
    }
  });

  test('the refusal audit counts a record the full spool cannot keep as lost (spool_full) and rejects its caller', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const faulty: Store = { ...store, transaction: (() => Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))) as Store['transaction'] };
    const spool = await AuditSpool.open({ directory: newDirectory(), databaseId, bounds: { recordsMax: 1 } });
    const lost: string[] = [];
    try {
      const refusals = new RefusalAudit(faulty, new AuditChainer(store, () => {}, clock), { spool, onLost: (reason) => lost.push(reason) });
      await refusals.record(refusal(clock, 'kept'));
      await assert.rejects(refusals.record(refusal(clock, 'lost')), AuditSpoolFull);
      assert.deepEqual(lost, ['spool_full']);
      assert.equal(spool.full, true);
    } finally {
      await spool.close();
    }
  });

  test('a drain that meets the outage in the middle of a file closes the file it was reading: passes in a long outage leak no file descriptor', async () => {
    const clock = new FakeClock();
    const directory = newDirectory();
    const spool = await AuditSpool.open({ directory, databaseId });
    try {
      // More than one batch's worth: the first batch is handed out before the file's end.
      await spool.keep(Array.from({ length: 450 }, (_, index) => refusal(clock, `many-${index}`)));
      const outage = Object.assign(new Error('connection refused'), { code: 'ECONNREFUSED' });
      const drain = new AuditSpoolDrain({ spool, append: () => Promise.reject(outage), chainer: { schedule: () => {} }, clock, logger: quietLogger });
      const openDescriptors = () => readdirSync('/proc/self/fd').length;
      await drain.runOnce();
      const before = openDescriptors();
      for (let pass = 0; pass < 30; pass += 1) await drain.runOnce();
      assert.ok(openDescriptors() - before < 5, `descriptors after 30 failed passes: ${before} -> ${openDescriptors()}`);
      assert.equal(spool.stats(clock.now()).records, 450, 'everything kept for the next pass');
    } finally {
      await spool.close();
    }
  });

  test('a file the database refuses for another reason than an outage is set aside (quarantined-...), counted and logged; the files after it drain and the spool empties', async () => {
    const clock = new FakeClock();
    const store = await newStore();
    const directory = newDirectory();
    const spool = await AuditSpool.open({ directory, databaseId });
    const lost: string[] = [];
    const errors: string[] = [];
    try {
      await spool.keep([refusal(clock, 'bad-1'), refusal(clock, 'poison'), refusal(clock, 'bad-3')]);
      await spool.sealForDrain();
      await spool.keep([refusal(clock, 'good-1'), refusal(clock, 'good-2')]);
      const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), clock);
      const drain = new AuditSpoolDrain({
        spool,
        // A record the database refuses (a constraint, a file copied by hand): not an outage.
        append: async (entries) => {
          if (entries.some((entry) => entry.correlationId === 'poison')) throw new Error('violates a constraint');
          await insertAuditEntriesOnce(store.db, entries);
        },
        chainer,
        clock,
        logger: { ...quietLogger, error: (fields: unknown, message?: string) => void errors.push(`${message ?? ''} ${JSON.stringify(fields)}`) },
        onLost: (reason) => lost.push(reason),
      });
      await drain.runOnce();
      await chainer.idle();
      assert.deepEqual(await chainedCorrelations(store), ['good-1', 'good-2'], 'the next file drained');
      assert.equal(spool.holdsRecords, false, 'the spool emptied: new refusals go to the database again');
      assert.deepEqual(lost, ['spool_quarantined', 'spool_quarantined', 'spool_quarantined']);
      const names = readdirSync(directory).filter((name) => name.startsWith('quarantined-'));
      assert.equal(names.length, 1);
      assert.equal(readFileSync(join(directory, names[0] ?? ''), 'utf8').trimEnd().split('\n').length, 3, 'kept on disk for an operator');
      assert.equal(errors.length, 1);
      assert.match(errors[0] ?? '', /set aside/);
      await drain.runOnce();
      assert.equal(readdirSync(directory).filter((name) => name.startsWith('quarantined-')).length, 1, 'never drained or claimed again');
    } finally {
      await spool.close();
    }
  });

  test('the setting: --audit-spool over COREGATE_AUDIT_SPOOL over ./data/audit-spool; an empty value is refused naming the setting', () => {
    assert.equal(resolveConfig({}, {}).auditSpool, './data/audit-spool');
    assert.equal(resolveConfig({}, { COREGATE_AUDIT_SPOOL: '/var/lib/coregate/spool' }).auditSpool, '/var/lib/coregate/spool');
    assert.equal(resolveConfig({ auditSpool: '/srv/spool' }, { COREGATE_AUDIT_SPOOL: '/var/lib/coregate/spool' }).auditSpool, '/srv/spool');
    assert.throws(() => resolveConfig({}, { COREGATE_AUDIT_SPOOL: ' ' }), /^Error: --audit-spool \/ COREGATE_AUDIT_SPOOL must be a directory path/);
  });

  test('a spool directory whose absolute path is too long for a socket works from the working directory; one too long either way is refused at open', async () => {
    // A working directory far longer than a socket path may be (CI workspaces, release directories).
    const deep = join(newDirectory(), 'a'.repeat(60), 'b'.repeat(60));
    mkdirSync(deep, { recursive: true });
    const before = process.cwd();
    process.chdir(deep);
    try {
      const directory = join(deep, 'data', 'audit-spool');
      assert.ok(Buffer.byteLength(join(directory, 'x'.repeat(12) + '.sock')) > socketPathBytesMax);
      assert.equal(socketAddress(join(directory, 'abc.sock')), join('data', 'audit-spool', 'abc.sock'));
      const spool = await AuditSpool.open({ directory: './data/audit-spool', databaseId: 'ab'.repeat(8) });
      try {
        await spool.keep([refusal(new FakeClock(), 'deep')]);
        assert.equal(spool.holdsRecords, true);
      } finally {
        await spool.close();
      }
      assert.throws(() => socketAddress(join('/', 'x'.repeat(120), 'abc.sock')), /longer than the system's 103 bytes, from the working directory too/);
    } finally {
      process.chdir(before);
    }
  });

  test('a spool directory that cannot be used stops the start, naming the setting', async () => {
    const directory = newDirectory();
    const notADirectory = join(directory, 'a-file');
    writeFileSync(notADirectory, 'not a directory');
    const config = resolveConfig({ port: '0', host: '127.0.0.1', db: `sqlite:${join(directory, 'coregate.db')}`, auditSpool: join(notADirectory, 'spool') }, {});
    const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    await assert.rejects(startCoregate(config, { log: { destination: quiet }, signingKeys: runSigningKeys }), (error: Error) => {
      assert.match(error.message, /^the audit spool directory .*a-file\/spool \(--audit-spool \/ COREGATE_AUDIT_SPOOL\) cannot be used: /);
      return true;
    });
  });
});
