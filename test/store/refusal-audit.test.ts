/**
 * Audit records of refused requests in batches (src/audit/refusal-audit.ts, CONTRACT §8): the
 * refusals of one turn of the event loop are written by one statement in one commit, each is
 * answered only once its record is committed, and the chain is extended after.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuditChainer, verifyAuditChain } from '../../src/audit/chain.js';
import { RefusalAudit } from '../../src/audit/refusal-audit.js';
import type { Store } from '../../src/store/connect.js';
import { migrateToLatest } from '../../src/store/migrate.js';
import { auditEntry } from '../../src/operations/operation-audit.js';
import { storeTargets, withStore } from '../helpers/stores.js';

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
  });
}

/**
 * Counts the statements that insert audit rows, as the store executes them: on the query
 * executors' shared prototype, so that transactions' executors count too. `restore()` undoes it.
 */
function countAuditInserts(store: Store): { inserts: () => number; restore: () => void } {
  let inserts = 0;
  let prototype: { executeQuery: (query: { sql: string }) => unknown } = Object.getPrototypeOf(store.db.getExecutor());
  while (!Object.prototype.hasOwnProperty.call(prototype, 'executeQuery')) prototype = Object.getPrototypeOf(prototype);
  const original = prototype.executeQuery;
  prototype.executeQuery = function (this: unknown, query: { sql: string }) {
    if (/^insert into "audit_records"/.test(query.sql)) inserts += 1;
    return original.call(this, query);
  };
  return { inserts: () => inserts, restore: () => void (prototype.executeQuery = original) };
}

for (const target of storeTargets) {
  test(`refusals arriving together are audited by one statement, each answered once committed, then chained [${target.name}]`, { skip: target.skip }, async () => {
    const created = await target.create();
    try {
      await withStore(created.url, async (store) => {
        await migrateToLatest(store);
        const chainer = new AuditChainer(store, (error) => assert.fail(String(error)));
        const refusals = new RefusalAudit(store, chainer);
        const counter = countAuditInserts(store);
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
