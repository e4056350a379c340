/**
 * The pending worker (docs/api.md, "200, 202, 204"): executes the operations answered with 202,
 * oldest first, unless the core's batch window is open. Every instance runs one; each operation is
 * taken by a guarded claim, so it is executed by one of them. A core failure leaves the operation
 * Unknown, for the reconciler.
 */
import type { BusinessRefusal } from '../core/error-catalogue.js';
import { BusinessRefusal as Refusal } from '../core/error-catalogue.js';
import type { Clock } from '../core/clock.js';
import { dateOf } from '../core/clock.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { listPendingOperations, type OperationRecord } from '../store/operations.js';
import { inBatchWindow, type BatchWindow } from './batch-window.js';
import type { Execution } from './execution.js';
import { callerOf } from './invocation.js';
import { Periodic } from '../clock/periodic.js';
import { isScenarioName, type Scenario } from './scenario.js';
import type { Operation, PreparedOperation, StoredRequest } from './operation-definition.js';

/** Pending operations executed per pass: bounds one pass's work. */
const workerBatchMax = 20;

export interface PendingWorkerOptions {
  store: Store;
  /** Whose time decides the batch window and stamps the audit (src/core/clock.ts). */
  clock: Clock;
  execution: Execution;
  logger: Logger;
  operations: ReadonlyMap<string, Operation>;
  batchWindow: BatchWindow | undefined;
  intervalMs: number;
}

export class PendingWorker {
  readonly #options: PendingWorkerOptions;
  readonly #periodic: Periodic;

  constructor(options: PendingWorkerOptions) {
    this.#options = options;
    this.#periodic = new Periodic(options.clock, options.intervalMs, () => this.#pass(), (error) => options.logger.error({ err: error }, 'pending operations worker failed'));
  }

  start(): void {
    this.#periodic.start();
    void this.kick();
  }

  stop(): Promise<void> {
    return this.#periodic.stop();
  }

  /** Executes what is pending now unless a pass is under way; resolves when the pass ends. */
  kick(): Promise<void> {
    return this.#periodic.kick();
  }

  /**
   * One pass, started or not; resolves when it ends. A pass runs until nothing is pending (or the
   * batch window opens), so it is also the worker's drain: tests drive the worker with it.
   */
  runOnce(): Promise<void> {
    return this.#periodic.runOnce();
  }

  async #pass(): Promise<void> {
    while (!this.#periodic.stopped && !inBatchWindow(this.#options.batchWindow, dateOf(this.#options.clock))) {
      const pending = await listPendingOperations(this.#options.store.db, this.#options.clock.now(), workerBatchMax);
      for (const record of pending) await this.#executeOne(record);
      if (pending.length < workerBatchMax) break;
    }
  }

  async #executeOne(record: OperationRecord): Promise<void> {
    const operation = this.#options.operations.get(record.operation);
    if (!operation || this.#periodic.stopped) return;
    const request = record.request as StoredRequest;
    let prepared: PreparedOperation;
    try {
      prepared = operation.prepare(request);
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      // Validated when accepted; a refusal now would mean the rules changed meanwhile.
      prepared = { run: async () => ({ status: 'Rejected', refusal: error as BusinessRefusal }) };
    }
    // What came of it is counted where it committed (operation-settlement.ts), not here.
    await this.#options.execution.execute({
      operation,
      prepared,
      record,
      from: { kind: 'stored', guard: { status: 'Pending' } },
      // The accepted request's scenario shapes this first execution (an async one's outcome).
      scenario: scenarioOf(record),
      audit: { operation: operation.name, family: operation.family, caller: callerOf(record.actor), correlationId: record.correlationId, path: record.path, startedAtMs: this.#options.clock.now() },
    });
  }
}

/**
 * The scenario of the request's first execution only: an operation held unknown before (its
 * 502/504 status kept, or attempts made), now a repeat accepted with 202, meets the real core, as
 * any repeat does.
 */
function scenarioOf(record: OperationRecord): Scenario | undefined {
  const stored = record.scenario;
  if (stored === undefined || record.httpStatus !== null || record.attempts > 0 || !isScenarioName(stored.name)) return undefined;
  // A slow core's delay was the operation's due time (scenario.ts, dueAfterMs): not waited twice.
  if (stored.name === 'slow') return undefined;
  return { name: stored.name, delayMs: stored.delayMs };
}
