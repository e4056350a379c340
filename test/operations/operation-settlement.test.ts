/**
 * An operation's final transition in one place (src/operations/operation-settlement.ts): each
 * outcome writes the guarded state change, the outbox event (docs/webhooks.md, "The outbox
 * guarantee") and the audit record (docs/api.md, "Audit") together, or nothing; an unknown outcome
 * is held with its back-off (docs/deployment.md, "The reconciler"). On both stores, without a
 * server or a core: the settlement is given the core's answer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AuditChainer, exportAudit, verifyAuditChain } from '../../src/audit/chain.js';
import { RefusalAudit } from '../../src/audit/refusal-audit.js';
import { BusinessRefusal, errorCatalogue as E } from '../../src/core/error-catalogue.js';
import { timeOrderedUuid } from '../../src/core/time-ordered-uuid.js';
import type { Store } from '../../src/store/connect.js';
import { openStore } from '../../src/store/connect.js';
import { migrateEmbedded } from '../helpers/migrate-embedded.js';
import type { OperationStatus } from '../../src/core/operation-status.js';
import { findOperation, insertOperation, type OperationRecord } from '../../src/store/operations.js';
import { inUnitOfWork } from '../../src/store/unit-of-work.js';
import { listEventsOf } from '../../src/store/webhooks.js';
import { ClaimLost, Claims } from '../../src/operations/correlation.js';
import { DuplicateWindow } from '../../src/operations/duplicate-window.js';
import { callerOf } from '../../src/operations/invocation.js';
import { OperationAudit, type AuditContext } from '../../src/operations/operation-audit.js';
import type { Operation } from '../../src/operations/operation-definition.js';
import { OperationSettlement, type SettlementTarget } from '../../src/operations/operation-settlement.js';
import { loanInstallmentExecution as loanInstallmentExecutionOperation } from '../../src/operations/loan-installment-execution/operation.js';
import { termDepositInitiation as termDepositInitiationOperation } from '../../src/operations/term-deposit-initiation/operation.js';
import { retryBaseMs } from '../../src/operations/retry-schedule.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { storeTargets } from '../helpers/stores.js';

const clientKey = 'http://127.0.0.1/realms/sandbox#settlement-app';
const at = Date.parse('2026-03-02T10:00:00.000Z');
const executedBody = { operationReference: 'set by each test', termDepositStatus: 'Active' };

function recordOf(operation: Operation, status: OperationStatus, fields: Partial<OperationRecord> = {}): OperationRecord {
  const reference = timeOrderedUuid(at);
  const path = operation === termDepositInitiationOperation ? 'POST /v1/term-deposits/initiate' : 'POST /v1/merchandising-loans/L1/installments/1/execute';
  return {
    reference,
    clientKey,
    correlationId: `corr-${reference}`,
    correlationSupplied: true,
    operation: operation.name,
    scope: operation.scope,
    path,
    requestHash: reference,
    request: { body: { amount: 1 }, params: {} },
    status,
    httpStatus: null,
    accepted: false,
    result: undefined,
    error: undefined,
    actor: { clientId: clientKey, backboneUser: 'U1', workstation: null, channel: null },
    createdAt: new Date(at - 60_000).toISOString(),
    createdEpochMs: at - 60_000,
    updatedAt: new Date(at - 30_000).toISOString(),
    updatedEpochMs: at - 30_000,
    attempts: 0,
    nextAttemptEpochMs: 0,
    ...fields,
  };
}

function targetOf(operation: Operation, record: OperationRecord, from: SettlementTarget['from']): SettlementTarget {
  const audit: AuditContext = { operation: operation.name, family: operation.family, caller: callerOf(record.actor), correlationId: record.correlationId, path: record.path, startedAtMs: Date.now() };
  return { operation, record, from, audit };
}

function stored(record: OperationRecord): SettlementTarget['from'] {
  return { kind: 'stored', guard: record.status === 'InFlight' ? { status: 'InFlight', updatedEpochMs: record.updatedEpochMs } : { status: record.status } };
}

for (const storeTarget of storeTargets) {
  describe(`an operation's final transition [${storeTarget.name}]`, { skip: storeTarget.skip }, () => {
    let created: { url: string; drop(): Promise<void> };
    let store: Store;
    let chainer: AuditChainer;
    let settlement: OperationSettlement;
    // Settlement takes its time as an argument; the chainer and the window read this one.
    const clock = new FakeClock(Date.now());

    before(async () => {
      created = await storeTarget.create();
      store = await openStore(created.url);
      await migrateEmbedded(store);
      chainer = new AuditChainer(store, (error) => {
        throw error;
      }, clock);
      const audit = new OperationAudit(chainer, new RefusalAudit(store, chainer), clock);
      settlement = new OperationSettlement({ store, claims: new Claims(new DuplicateWindow(0, clock)), audit, backoffMaxMs: 60_000 });
    });

    after(async () => {
      await chainer.idle();
      await store.close();
      await created.drop();
    });

    async function auditOf(reference: string) {
      await chainer.idle();
      const records = [];
      for await (const record of exportAudit(store)) if (record.reference === reference) records.push(record);
      return records;
    }

    async function eventsOf(reference: string) {
      return (await listEventsOf(store.db, { reference })).map((event) => ({ type: event.type, data: (JSON.parse(event.payload) as { data: Record<string, unknown> }).data }));
    }

    test('Executed (embedded): joins the caller\'s unit of work; the state, its event and its audit record commit together, and the chain verifies', async () => {
      const record = recordOf(termDepositInitiationOperation, 'InFlight');
      await insertOperation(store.db, record);
      const body = { ...executedBody, operationReference: record.reference };
      const settled = await inUnitOfWork(store, (unitOfWork) =>
        settlement.write(unitOfWork.db, targetOf(termDepositInitiationOperation, record, stored(record)), { status: 'Executed', body, outcome: 'Executed' }, at),
      );
      assert.deepEqual(settled, { kind: 'executed', body });
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Executed');
      assert.equal(after?.httpStatus, 200);
      assert.deepEqual(after?.result, body);
      assert.equal(after?.request, undefined, 'a final operation keeps no request');
      assert.equal(after?.updatedEpochMs, at, 'the transition is dated by the instant it is given');
      assert.deepEqual(await eventsOf(record.reference), [
        { type: 'operation.executed', data: { reference: record.reference, operation: record.operation, realm: 'sandbox', clientId: 'settlement-app', correlationId: record.correlationId, status: 'Executed', result: body } },
      ]);
      const audit = await auditOf(record.reference);
      assert.deepEqual(audit.map((entry) => [entry.httpStatus, entry.outcome, entry.backboneUser, entry.details]), [[200, 'Executed', 'U1', { path: record.path, channel: null }]]);
      // The caller's unit of work commits it, so the caller schedules the chain.
      chainer.schedule();
      await chainer.idle();
      assert.equal((await verifyAuditChain(store)).ok, true);
    });

    test('Executed inside a unit of work that then rolls back (the core\'s postings failed after it): nothing of it remains', async () => {
      const record = recordOf(termDepositInitiationOperation, 'InFlight');
      await insertOperation(store.db, record);
      await assert.rejects(
        inUnitOfWork(store, async (unitOfWork) => {
          await settlement.write(unitOfWork.db, targetOf(termDepositInitiationOperation, record, stored(record)), { status: 'Executed', body: executedBody, outcome: 'Executed' }, at);
          throw new Error('the unit of work fails after the settlement');
        }),
        /fails after the settlement/,
      );
      assert.equal((await findOperation(store.db, record.reference))?.status, 'InFlight');
      assert.deepEqual(await eventsOf(record.reference), []);
      assert.deepEqual(await auditOf(record.reference), []);
    });

    test('Rejected after the embedded unit of work rolled back: the operation is inserted Rejected with its error record, its event and a 422 audit record, in a transaction of its own', async () => {
      const record = recordOf(termDepositInitiationOperation, 'InFlight');
      const refusal = new BusinessRefusal(E.insufficientFundsSource, 'Source account 1000000001 holds 10.00 USD; the principal is 500.00 USD');
      const settled = await settlement.commit(targetOf(termDepositInitiationOperation, record, { kind: 'new' }), { status: 'Rejected', refusal }, at);
      const error = {
        status: 422,
        reason: 'BUSINESS_RULE_VIOLATION',
        message: refusal.message,
        path: record.path,
        errordetail: [{ code: 'TD-422-002', reason: 'INSUFFICIENT_FUNDS_SOURCE_ACCOUNT', message: refusal.message }],
      };
      assert.deepEqual(settled, { kind: 'rejected', status: 422, error });
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Rejected');
      assert.equal(after?.httpStatus, 422);
      assert.deepEqual(after?.error, error);
      assert.equal(after?.result, undefined, 'a refusal answered at once keeps no body');
      assert.deepEqual(await eventsOf(record.reference), [
        { type: 'operation.rejected', data: { reference: record.reference, operation: record.operation, realm: 'sandbox', clientId: 'settlement-app', correlationId: record.correlationId, status: 'Rejected', error } },
      ]);
      const audit = await auditOf(record.reference);
      assert.deepEqual(audit.map((entry) => [entry.httpStatus, entry.outcome, entry.details]), [[422, 'Rejected', { path: record.path, channel: null, code: 'TD-422-002' }]]);
      assert.equal(audit[0]?.chainSeq !== null, true, 'commit schedules the chain after it commits');
    });

    test('Unknown → Executed (a repeat or GET found the outcome in the core): the earlier 504 error is dropped, the result kept, event and audit written', async () => {
      const record = recordOf(termDepositInitiationOperation, 'Unknown', { httpStatus: 504, error: { status: 504, reason: 'CORE_TIMEOUT', message: 'x', path: 'POST /v1/term-deposits/initiate' }, attempts: 2 });
      await insertOperation(store.db, record);
      const body = { ...executedBody, operationReference: record.reference };
      await settlement.commit(targetOf(termDepositInitiationOperation, record, stored(record)), { status: 'Executed', body, outcome: 'Executed' }, at);
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Executed');
      assert.equal(after?.httpStatus, 200);
      assert.equal(after?.error, undefined, 'the unknown outcome\'s 504 is not the operation\'s outcome');
      assert.deepEqual(after?.result, body);
      assert.deepEqual((await eventsOf(record.reference)).map((event) => event.type), ['operation.executed']);
      assert.deepEqual((await auditOf(record.reference)).map((entry) => [entry.httpStatus, entry.outcome]), [[200, 'Executed']]);
    });

    test('Unknown → Rejected NOT_EXECUTED after the reconciler fenced the reference: 502 with TD-502-002, its event and audit record', async () => {
      const unknown = recordOf(termDepositInitiationOperation, 'Unknown', { httpStatus: 502, attempts: 1 });
      // The reconciler claims it InFlight before it fences and looks up.
      const record: OperationRecord = { ...unknown, status: 'InFlight', updatedEpochMs: at - 1 };
      await insertOperation(store.db, record);
      const refusal = new BusinessRefusal(E.notExecuted, 'The operation was never executed');
      const settled = await settlement.commit(targetOf(termDepositInitiationOperation, record, stored(record)), { status: 'Rejected', refusal }, at);
      assert.equal(settled.kind, 'rejected');
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Rejected');
      assert.equal(after?.httpStatus, 502);
      assert.equal(after?.request, undefined, 'a final operation keeps no request');
      assert.deepEqual(after?.error, {
        status: 502,
        reason: 'CORE_UNAVAILABLE',
        message: refusal.message,
        path: record.path,
        errordetail: [{ code: 'TD-502-002', reason: 'NOT_EXECUTED', message: refusal.message }],
      });
      assert.deepEqual((await eventsOf(record.reference)).map((event) => event.type), ['operation.rejected']);
      assert.deepEqual((await auditOf(record.reference)).map((entry) => [entry.httpStatus, entry.outcome, entry.details.code]), [[502, 'Rejected', 'TD-502-002']]);
    });

    test('Rejected for an operation answered 202: it keeps the body its kind gives a rejection, dated as the 202 (a loan\'s Rejected status)', async () => {
      const record = recordOf(loanInstallmentExecutionOperation, 'InFlight', { accepted: true });
      await insertOperation(store.db, record);
      const refusal = new BusinessRefusal(E.insufficientFundsPayment, 'The payment account cannot cover 10.00 USD');
      await settlement.commit(targetOf(loanInstallmentExecutionOperation, record, stored(record)), { status: 'Rejected', refusal }, at);
      const after = await findOperation(store.db, record.reference);
      assert.deepEqual(after?.result, { executionReference: record.reference, executionDateTime: record.createdAt, merchandisingLoanFacilityStatus: 'Rejected' });
      assert.equal((after?.error as { errordetail: Array<{ code: string }> }).errordetail[0]?.code, 'ML-422-007');
    });

    test('a transition whose guard no longer holds (another instance moved it) is ClaimLost and writes nothing', async () => {
      const record = recordOf(termDepositInitiationOperation, 'InFlight');
      await insertOperation(store.db, record);
      const stale = { ...record, updatedEpochMs: record.updatedEpochMs - 1 };
      await assert.rejects(settlement.commit(targetOf(termDepositInitiationOperation, stale, stored(stale)), { status: 'Executed', body: executedBody, outcome: 'Executed' }, at), ClaimLost);
      await assert.rejects(settlement.commit(targetOf(termDepositInitiationOperation, stale, stored(stale)), { status: 'Rejected', refusal: new BusinessRefusal(E.customerBlocked, 'blocked') }, at), ClaimLost);
      assert.equal((await findOperation(store.db, record.reference))?.status, 'InFlight');
      assert.deepEqual(await eventsOf(record.reference), []);
      assert.deepEqual(await auditOf(record.reference), []);
    });

    test('an execution whose outcome is unknown is held Unknown with its 504 error and an audit record, first retry backed off by 1-2 s; no event', async () => {
      const record = recordOf(termDepositInitiationOperation, 'InFlight');
      await settlement.holdUnknown(targetOf(termDepositInitiationOperation, record, { kind: 'new' }), at, E.coreTimeout);
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Unknown');
      assert.equal(after?.httpStatus, 504);
      assert.equal(after?.attempts, 0);
      assert.ok(after && after.nextAttemptEpochMs >= at + retryBaseMs / 2 && after.nextAttemptEpochMs <= at + retryBaseMs, `next attempt ${after?.nextAttemptEpochMs} is 1-2 s after ${at}`);
      assert.deepEqual(after?.error, {
        status: 504,
        reason: 'CORE_TIMEOUT',
        message: 'The core\'s outcome is unknown',
        path: record.path,
        errordetail: [{ code: 'TD-504-001', reason: 'CORE_TIMEOUT', message: 'The core\'s outcome is unknown' }],
      });
      assert.deepEqual(await eventsOf(record.reference), [], 'an unknown outcome is not final: no event');
      assert.deepEqual((await auditOf(record.reference)).map((entry) => [entry.httpStatus, entry.outcome, entry.details.code]), [[504, 'Unknown', 'TD-504-001']]);
    });

    test('a failed reconciliation attempt moves the operation back to Unknown, one attempt more and backed off further, keeping its error and writing no audit record', async () => {
      const error = { status: 502, reason: 'CORE_UNAVAILABLE', message: 'earlier', path: 'POST /v1/term-deposits/initiate' };
      const record = recordOf(termDepositInitiationOperation, 'InFlight', { httpStatus: 502, error, attempts: 3 });
      await insertOperation(store.db, record);
      await settlement.holdUnknown(targetOf(termDepositInitiationOperation, record, stored(record)), at);
      const after = await findOperation(store.db, record.reference);
      assert.equal(after?.status, 'Unknown');
      assert.equal(after?.attempts, 4);
      assert.equal(after?.httpStatus, 502);
      assert.deepEqual(after?.error, error);
      assert.ok(after && after.nextAttemptEpochMs >= at + 8 * retryBaseMs && after.nextAttemptEpochMs <= at + 16 * retryBaseMs, 'the fourth retry is 16-32 s away');
      assert.deepEqual(await auditOf(record.reference), []);
      await assert.rejects(settlement.holdUnknown(targetOf(termDepositInitiationOperation, record, stored(record)), at), ClaimLost, 'its guard no longer holds');
    });
  });
}
