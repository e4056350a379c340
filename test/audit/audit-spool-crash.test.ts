/**
 * The audit spool survives the crash of its process (src/audit/audit-spool.ts,
 * src/audit/audit-spool-drain.ts; docs/api.md "Audit"). A real process (audit-spool-child.ts) is
 * killed with SIGKILL:
 * - in the middle of a drain, its first batch committed and the rest not: another process claims
 *   the file the dead one left and drains it again, and every record is in the audit table exactly
 *   once, in the order kept, and the chain verifies;
 * - in the middle of its appends: every record whose keep was answered is drained, once; the line
 *   the kill cut, never answered, is skipped.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { AuditSpool } from '../../src/audit/audit-spool.js';
import { AuditSpoolDrain } from '../../src/audit/audit-spool-drain.js';
import { AuditChainer, verifyAuditChain } from '../../src/audit/chain.js';
import { spoolDatabaseId } from '../../src/audit/spool-database-id.js';
import { auditRowsPerStatementMax, insertAuditEntriesOnce, listChained } from '../../src/store/audit.js';
import { systemClock } from '../../src/clock/system-clock.js';
import type { Store } from '../../src/store/connect.js';
import { tempDirectory } from '../helpers/data-files.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import { repoRoot } from '../helpers/repo-root.js';
import { storeTargets, withCreatedStore, withStore } from '../helpers/stores.js';

const root = tempDirectory('coregate-spool-crash-');
let directories = 0;
function newDirectory(): string {
  const directory = join(root, String((directories += 1)));
  mkdirSync(directory);
  return directory;
}

/** The child as this file runs: through tsx from test/, or compiled from dist/test (scripts/test.mjs). */
const childArgs = import.meta.url.endsWith('.ts') ? ['--import', 'tsx', join(repoRoot, 'test/audit/audit-spool-child.ts')] : [join(repoRoot, 'dist/test/audit/audit-spool-child.js')];

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts the child; `until` answers true for the output line after which it is killed (SIGKILL). Resolves with its output once it is dead. */
function runChildUntil(args: string[], until: (line: string) => boolean): Promise<string[]> {
  const child = spawn(process.execPath, [...childArgs, ...args], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const lines: string[] = [];
  let stderr = '';
  let pending = '';
  child.stderr?.on('data', (chunk) => (stderr += String(chunk)));
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk) => {
      pending += String(chunk);
      const complete = pending.split('\n');
      pending = complete.pop() ?? '';
      for (const line of complete) {
        lines.push(line);
        if (until(line)) child.kill('SIGKILL');
      }
    });
    child.once('exit', (code, signal) => {
      children.delete(child);
      if (signal === 'SIGKILL') resolve(lines);
      else reject(new Error(`the child ended by itself (code ${code}): ${stderr}${lines.join('\n')}`));
    });
  });
}

/** A second process's drain on the same directory (this test's process), to the end. */
async function drainAfterCrash(store: Store, directory: string): Promise<void> {
  const spool = await AuditSpool.open({ directory, databaseId: await spoolDatabaseId(store.db) });
  try {
    const chainer = new AuditChainer(store, (error) => assert.fail(String(error)), systemClock);
    const drain = new AuditSpoolDrain({ spool, append: (entries) => insertAuditEntriesOnce(store.db, entries), chainer, clock: systemClock, logger: { info: () => {}, warn: () => {}, error: () => {} } });
    // The first pass claims the dead process's files (its socket refuses connections now) and drains them.
    await drain.runOnce();
    await chainer.idle();
    assert.equal(spool.holdsRecords, false);
  } finally {
    await spool.close();
  }
}

async function auditedCorrelations(store: Store): Promise<string[]> {
  const rows = await store.db.selectFrom('audit_records').select('correlation_id').execute();
  return rows.map((row) => row.correlation_id ?? '');
}

describe('the audit spool after a crash', () => {
  for (const target of storeTargets) {
    test(`a drain killed after its first batch committed: the next process drains the file again and every record is appended once, in order [${target.name}]`, { skip: target.skip, timeout: 120_000 }, async () => {
      await withCreatedStore(target, async (url) => {
        await withStore(url, (store) => migrateEmbedded(store));
        const directory = newDirectory();
        const records = auditRowsPerStatementMax * 2 + 50;
        const output = await runChildUntil(['drain', url, directory, String(records)], (line) => line === 'committed');
        assert.deepEqual(output, ['kept', 'committed']);
        await withStore(url, async (store) => {
          assert.equal((await auditedCorrelations(store)).length, auditRowsPerStatementMax, 'the dead drain committed its first batch only');
          assert.equal(readdirSync(directory).filter((name) => name.endsWith('.jsonl')).length, 1, 'and left its file');
          await drainAfterCrash(store, directory);
          const audited = await auditedCorrelations(store);
          assert.equal(audited.length, records, 'every record once: none lost, none appended twice');
          assert.equal(new Set(audited).size, records);
          const chained = await listChained(store.db, 0, records + 1);
          assert.deepEqual(
            chained.map((entry) => entry.correlationId),
            Array.from({ length: records }, (_, index) => `crash-${index}`),
            'chained in the order kept',
          );
          const verified = await verifyAuditChain(store);
          assert.deepEqual({ ok: verified.ok, chained: verified.chained, unchained: verified.unchained }, { ok: true, chained: records, unchained: 0 });
          assert.deepEqual(readdirSync(directory).filter((name) => name.endsWith('.jsonl')), [], 'the claimed file is removed once drained');
        });
      });
    });
  }

  const sqlite = storeTargets.find((target) => target.name === 'sqlite');
  test('a process killed in the middle of its appends: every record it was answered for is drained by the next process, once', { skip: sqlite?.skip, timeout: 120_000 }, async () => {
    if (!sqlite) return;
    await withCreatedStore(sqlite, async (url) => {
      await withStore(url, (store) => migrateEmbedded(store));
      const directory = newDirectory();
      let acknowledgements = 0;
      // Killed while it keeps appending: the last write may be cut in the middle of a line.
      const output = await runChildUntil(['append', url, directory], (line) => line.startsWith('acknowledged') && (acknowledgements += 1) === 40);
      const acknowledged = output.filter((line) => line.startsWith('acknowledged ')).flatMap((line) => line.slice('acknowledged '.length).split(' '));
      assert.ok(acknowledged.length >= 120);
      await withStore(url, async (store) => {
        await drainAfterCrash(store, directory);
        const audited = await auditedCorrelations(store);
        assert.equal(new Set(audited).size, audited.length, 'no record twice');
        const missing = acknowledged.filter((id) => !audited.includes(id));
        assert.deepEqual(missing, [], 'every acknowledged record is in the audit table');
        // What the kill caught after the last acknowledgement may be there (written, not yet answered): never more than that.
        assert.ok(audited.every((id) => /^crash-\d+$/.test(id)));
        assert.equal((await verifyAuditChain(store)).ok, true);
      });
    });
  });
});
