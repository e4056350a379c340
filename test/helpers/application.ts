/**
 * The application layer assembled in the test's own process, as src/main.ts assembles it but
 * without HTTP: a migrated SQLite store in a temporary file holding the demo data, the embedded
 * reference core behind a FaultyCore (embedded: joining the unit of work; remote: claim, call and
 * settle apart), and the runner, execution, reconciler and pending worker on a FakeClock. Nothing
 * runs on its own: a test moves the clock and drives the loops (`runOnce()`).
 */
import { OperationSettlement } from '../../src/operations/operation-settlement.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditChainer } from '../../src/audit/chain.js';
import { RefusalAudit } from '../../src/audit/refusal-audit.js';
import { Vault } from '../../src/auth/vault.js';
import { createLogger } from '../../src/log.js';
import { Claims } from '../../src/operations/correlation.js';
import { DuplicateWindow } from '../../src/operations/duplicate-window.js';
import { Execution } from '../../src/operations/execution.js';
import type { Invocation } from '../../src/operations/invocation.js';
import { OperationAudit } from '../../src/operations/operation-audit.js';
import { OperationRunner } from '../../src/operations/operation-runner.js';
import { PendingWorker } from '../../src/operations/pending-worker.js';
import { Reconciler } from '../../src/operations/reconciler.js';
import { businessOperations } from '../../src/operations/registry.js';
import { ReferenceCore } from '../../src/reference-core/reference-core.js';
import { readSandboxFile } from '../../src/sandbox/data-file.js';
import { loadSandboxData } from '../../src/sandbox/load.js';
import { readBusinessCalendar } from '../../src/reference-core/storage/load-core-data.js';
import { openStore, type Store } from '../../src/store/connect.js';
import { migrateEmbedded } from './migrate-embedded.js';
import { findOperation, type OperationRecord } from '../../src/store/operations.js';
import { coreStorage } from '../../src/reference-core/storage/reference-core-repository.js';
import { coreDataLoad } from '../../src/reference-core/storage/core-data-load.js';
import { coreRecords } from '../../src/reference-core/storage/core-records.js';
import { FakeClock } from './fake-clock.js';
import { FaultyCore } from './faulty-core.js';
import { demoDataFile } from './server.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

/** As `coregate serve` defaults them (src/config.ts), the reconciler's lease as main.ts derives it. */
export const applicationTimings = {
  coreTimeoutMs: 5_000,
  reconcileIntervalMs: 2_000,
  backoffMaxMs: 60_000,
  unknownAgeLimitMs: 3_600_000,
  leaseMs: 2 * 5_000 + 5_000,
} as const;

export interface Application {
  clock: FakeClock;
  gate: FaultyCore;
  store: Store;
  runner: OperationRunner;
  execution: Execution;
  reconciler: Reconciler;
  worker: PendingWorker;
  chainer: AuditChainer;
  /** The stored record of an operation (it must exist). */
  record(reference: string): Promise<OperationRecord>;
  close(): Promise<void>;
}

export async function startApplication(options: { strategy: 'embedded' | 'remote'; coreTimeoutMs?: number }): Promise<Application> {
  const dir = mkdtempSync(join(tmpdir(), 'coregate-application-'));
  const store = await openStore(`sqlite:${join(dir, 'coregate.db')}`);
  const clock = new FakeClock();
  const gate = new FaultyCore();
  const logger = createLogger({ level: 'silent' });
  try {
    await migrateEmbedded(store);
    await loadSandboxData(store, new Vault(undefined), readSandboxFile(demoDataFile), { webhookTargets: { allowPrivate: false }, clock });
    const calendar = await readBusinessCalendar(coreTablesOf(store.db), undefined, clock);
    const core = gate.wrap(new ReferenceCore({ storage: coreStorage(store, clock), records: coreRecords(coreTablesOf(store.db)), data: coreDataLoad(store, clock), calendar, clock }), { remote: options.strategy === 'remote' });
    const chainer = new AuditChainer(store, (error) => logger.error({ err: error }, 'audit chain extension failed'), clock);
    const audit = new OperationAudit(chainer, new RefusalAudit(store, chainer), clock);
    const window = new DuplicateWindow(60, clock);
    const claims = new Claims(window);
    const t = { ...applicationTimings, ...(options.coreTimeoutMs === undefined ? {} : { coreTimeoutMs: options.coreTimeoutMs }) };
    const observeCoreCall = () => {};
    const settlement = new OperationSettlement({ store, claims, audit, backoffMaxMs: t.backoffMaxMs });
    const execution = new Execution({ store, clock, core, claims, settlement, logger, coreTimeoutMs: t.coreTimeoutMs, observeCoreCall });
    const reconciler = new Reconciler({
      store,
      clock,
      core,
      claims,
      execution,
      settlement,
      logger,
      operations: businessOperations,
      coreTimeoutMs: t.coreTimeoutMs,
      intervalMs: t.reconcileIntervalMs,
      leaseMs: t.leaseMs,
      unknownAgeLimitMs: t.unknownAgeLimitMs,
      observeCoreCall,
    });
    const worker = new PendingWorker({ store, clock, execution, logger, operations: businessOperations, batchWindow: undefined, intervalMs: 1_000 });
    const runner = new OperationRunner({ store, clock, claims, window, execution, reconciler, worker, audit, coreTimeoutMs: t.coreTimeoutMs, batchWindow: undefined });
    return {
      clock,
      gate,
      store,
      runner,
      execution,
      reconciler,
      worker,
      chainer,
      async record(reference) {
        const found = await findOperation(store.db, reference);
        if (!found) throw new Error(`operation ${reference} is not stored`);
        return found;
      },
      async close() {
        gate.fault = { kind: 'none' };
        gate.release();
        await worker.stop();
        await reconciler.stop();
        await chainer.idle();
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

let calls = 0;

/** One call of the term deposit initiation by the demo's treasury client, as the HTTP layer hands it over. */
export function depositInvocation(clock: FakeClock, body: Record<string, unknown>, options: { respondAsync?: boolean; correlationId?: string } = {}): Invocation {
  calls += 1;
  return {
    caller: { clientKey: 'http://coregate.test/realms/sandbox#treasury-app', backboneUser: undefined, workstation: undefined, channel: undefined },
    correlationId: options.correlationId ?? `application-${process.pid}-${calls}`,
    correlationSupplied: true,
    path: 'POST /v1/term-deposits/initiate',
    request: { body, params: {} },
    respondAsync: options.respondAsync ?? false,
    startedAtMs: clock.now(),
  };
}
