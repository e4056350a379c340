/**
 * A process for test/audit/audit-spool-crash.test.ts, which kills it with SIGKILL at a point it
 * announces on stdout: an instance's audit spool (src/audit/audit-spool.ts) on `<directory>` for
 * the database `<db url>`.
 *
 * - `drain <db url> <directory> <records>`: keeps that many records, says `kept`, then drains them
 *   (src/audit/audit-spool-drain.ts) and, once the first batch is committed, says `committed` and
 *   waits to be killed: the file is left with its first records in the audit table.
 * - `append <db url> <directory>`: keeps records, a few at a time, and says `acknowledged <ids>`
 *   once each call is answered (on disk), until killed in the middle of its appends.
 */
import { AuditSpool } from '../../src/audit/audit-spool.js';
import { AuditSpoolDrain } from '../../src/audit/audit-spool-drain.js';
import { spoolDatabaseId } from '../../src/audit/spool-database-id.js';
import { auditEntry } from '../../src/operations/operation-audit.js';
import { insertAuditEntriesOnce, type AuditEntry } from '../../src/store/audit.js';
import { openStore } from '../../src/store/connect.js';
import { FakeClock } from '../helpers/fake-clock.js';

const [mode, dbUrl = '', directory = '', count = '0'] = process.argv.slice(2);
const clock = new FakeClock();
const store = await openStore(dbUrl);
const spool = await AuditSpool.open({ directory, databaseId: await spoolDatabaseId(store.db) });
// Killed, not ended: this keeps the process alive until then.
setInterval(() => {}, 60_000);

function refusal(index: number): AuditEntry {
  clock.advance(1);
  return auditEntry(
    {
      operation: 'termDeposit.initiate',
      clientId: 'http://127.0.0.1/realms/sandbox#treasury-app',
      backboneUser: null,
      workstation: null,
      correlationId: `crash-${index}`,
      reference: null,
      httpStatus: 503,
      outcome: 'Refused',
      durationMs: 2,
      details: { path: 'POST /v1/term-deposits/initiate', code: 'TD-503-001' },
    },
    clock.now(),
  );
}

if (mode === 'drain') {
  const entries = Array.from({ length: Number(count) }, (_, index) => refusal(index));
  for (let start = 0; start < entries.length; start += 100) await spool.keep(entries.slice(start, start + 100));
  process.stdout.write('kept\n');
  let batches = 0;
  const drain = new AuditSpoolDrain({
    spool,
    append: async (batch) => {
      await insertAuditEntriesOnce(store.db, batch);
      batches += 1;
      if (batches === 1) {
        process.stdout.write('committed\n');
        await new Promise(() => {});
      }
    },
    chainer: { schedule: () => {} },
    clock,
    logger: { info: () => {}, warn: () => {}, error: () => {} },
  });
  await drain.runOnce();
} else if (mode === 'append') {
  for (let index = 0; ; index += 3) {
    const entries = [refusal(index), refusal(index + 1), refusal(index + 2)];
    await spool.keep(entries);
    process.stdout.write(`acknowledged ${entries.map((entry) => entry.correlationId).join(' ')}\n`);
  }
} else {
  throw new Error(`unknown mode ${mode}`);
}
