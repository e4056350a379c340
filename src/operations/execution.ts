/**
 * Executing a claimed operation in the core, and recording what came of it. Two strategies, one
 * result type:
 * - embedded: the core joins the store's unit of work (TransactionalCore), so the claim, the
 *   postings, the settled operation and the audit record commit in one transaction
 *   (docs/architecture.md, "One transaction with the embedded core");
 * - remote: the claim commits first (InFlight, with the request), the core is called under the
 *   time-out, and the outcome is settled after; an outcome lost on the way is held as Unknown until
 *   a repeat or the reconciler asks the core by reference.
 */
import type { BusinessRefusal, ErrorEntry } from '../core/error-catalogue.js';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import type { Clock } from '../core/clock.js';
import { CoreTimeout, CoreUnavailable, isTransactional, type CoreBankingPort } from '../core/port.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/connect.js';
import { isUniqueViolation, type OperationRecord } from '../store/operations.js';
import type { Queryable } from '../store/queryable.js';
import { inUnitOfWork } from '../store/unit-of-work.js';
import { callCore, callResultOf, isCoreFailure, type CoreCallObserver, type CoreCallResult } from './core-call.js';
import { ClaimLost, Claims, DuplicateInWindow, recoverClaim, type ClaimFrom, type ClaimRecovery } from './correlation.js';
import type { ErrorRecord } from './error-record.js';
import type { AuditContext } from './operation-audit.js';
import type { Operation, PreparedOperation, Settlement } from './operation-definition.js';
import type { OperationSettlement, Settled } from './operation-settlement.js';
import { scenarioOutageMs, type Scenario } from './scenario.js';

export interface ExecutionJob {
  operation: Operation;
  prepared: PreparedOperation;
  /** The record as it is stored, or as it will be inserted (from.kind new). */
  record: OperationRecord;
  from: ClaimFrom;
  audit: AuditContext;
  /**
   * A sandbox scenario armed for this attempt (docs/sandbox.md, "Scenarios"): the request's first
   * execution, or the pending worker's of an accepted one; never a repeat's or the reconciler's,
   * which meet the real core.
   */
  scenario?: Scenario | undefined;
}

export type ExecutionResult =
  | { kind: 'executed'; body: unknown }
  | { kind: 'rejected'; status: number; error: ErrorRecord }
  | { kind: 'unknown'; entry: ErrorEntry }
  | ClaimRecovery;

/** A refusal inside the unit of work: it rolls back, then the refusal is recorded on its own. */
class RollBack extends Error {
  constructor(readonly refusal: BusinessRefusal) {
    super(refusal.message);
  }
}

export interface ExecutionOptions {
  store: Store;
  /** Whose time stamps each move and runs the core call's time-out (src/core/clock.ts). */
  clock: Clock;
  core: CoreBankingPort;
  claims: Claims;
  logger: Logger;
  coreTimeoutMs: number;
  observeCoreCall: CoreCallObserver;
  /** An operation's final transitions (state, event, audit record, metrics): one, shared by the execution and the reconciler. */
  settlement: OperationSettlement;
  /** Sandbox mode only: the core as it behaves under a scenario (src/sandbox/scenario-core.ts). */
  scenarioCore?: ((core: CoreBankingPort, scenario: Scenario) => CoreBankingPort) | undefined;
}

export class Execution {
  readonly #options: ExecutionOptions;
  readonly #settlement: OperationSettlement;
  /** Units of work still running after their caller was answered 504: they commit late, or are recorded unknown. */
  readonly #late = new Set<Promise<void>>();

  constructor(options: ExecutionOptions) {
    this.#options = options;
    this.#settlement = options.settlement;
  }

  /** Resolves when every unit of work that outlived its time-out has committed or been recorded unknown (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#late.size > 0) await Promise.allSettled([...this.#late]);
  }

  get embedded(): boolean {
    return isTransactional(this.#options.core);
  }

  execute(job: ExecutionJob): Promise<ExecutionResult> {
    const { scenarioCore, core } = this.#options;
    // A scenario's fault lies between the API and the core, so the operation runs the way it runs
    // against a remote core (claim, call, settle), whichever core is behind the port: an embedded
    // unit of work would hold its transaction (SQLite's one writer) through a forced time-out.
    if (job.scenario !== undefined && scenarioCore !== undefined) return this.#executeRemote(job, scenarioCore(core, job.scenario));
    return this.embedded ? this.#executeEmbedded(job) : this.#executeRemote(job, core);
  }

  async #executeEmbedded(job: ExecutionJob): Promise<ExecutionResult> {
    const { store, core, claims } = this.#options;
    if (!isTransactional(core)) throw new Error('embedded execution needs a transactional core');
    const { reference } = job.record;
    const claimedAt = this.#options.clock.now();
    const settling = inFlight(job, claimedAt);
    // The core's time starts when the unit of work holds its connection, armed in the same step as
    // the work starts: waiting for a connection is the database's, and none within the store's
    // connect time-out is a 503 (nothing ran), never a 504 (an outcome unknown) won by the race of
    // two equal time-outs. The claim runs inside the timed unit of work: a refusal is the core's
    // answer, a lost claim or a duplicate is not a core call at all and is left out of the metrics.
    // `work` is read by the callback once the store runs it, never synchronously within
    // inUnitOfWork (a connection or the write lock is awaited first).
    let timeFrom!: (timed: Promise<Settled>) => void;
    const timed = new Promise<Settled>((resolve) => (timeFrom = resolve));
    const work: Promise<Settled> = inUnitOfWork(store, async (unitOfWork) => {
      timeFrom(callCore(this.#options.clock, this.#options.observeCoreCall, job.operation.name, this.#options.coreTimeoutMs, () => work, undefined, embeddedFailureOf));
      const settlement = await claimAndRun(
        claims.claim(unitOfWork, job.record, job.from, 'InFlight', claimedAt),
        () => job.prepared.run(core.within(unitOfWork), reference),
        claims.checksWindow(job.record, job.from),
      );
      if (settlement.status === 'Rejected') throw new RollBack(settlement.refusal);
      return this.#settlement.write(unitOfWork.db, settling, settlement, this.#options.clock.now());
    });
    try {
      // `work` settles alone only when no connection came (timed never started).
      const settled = await Promise.race([timed, work]);
      this.#settlement.committed(settling, settled);
      return settled;
    } catch (error) {
      const recovered = await recoverClaim(store.db, error, job.record);
      if (recovered) return recovered;
      if (error instanceof RollBack) return this.#recordRejected(job, error.refusal);
      if (error instanceof CoreTimeout) {
        // The unit of work may still commit; only if it does not is the outcome held as unknown.
        const late = work.then(
          (settled) => this.#settlement.committed(settling, settled),
          (failure: unknown) => this.#recordUnknown(job, E.coreTimeout, failure),
        );
        this.#late.add(late);
        void late.finally(() => this.#late.delete(late));
        return { kind: 'unknown', entry: E.coreTimeout };
      }
      if (error instanceof CoreUnavailable) {
        await this.#recordUnknown(job, E.coreUnavailable, error);
        return { kind: 'unknown', entry: E.coreUnavailable };
      }
      throw error;
    }
  }

  async #executeRemote(job: ExecutionJob, core: CoreBankingPort): Promise<ExecutionResult> {
    const { store, claims } = this.#options;
    const { reference } = job.record;
    const claimedAt = this.#options.clock.now();
    try {
      await inUnitOfWork(store, (unitOfWork) => claims.claim(unitOfWork, job.record, job.from, 'InFlight', claimedAt));
    } catch (error) {
      const recovered = await recoverClaim(store.db, error, job.record);
      if (recovered) return recovered;
      throw error;
    }
    let settlement: Settlement;
    try {
      settlement = await callCore(this.#options.clock, this.#options.observeCoreCall, job.operation.name, this.#options.coreTimeoutMs, () => job.prepared.run(core, reference), (answer) =>
        answer.status === 'Executed' ? 'ok' : 'refused',
      );
    } catch (error) {
      if (!isCoreFailure(error)) throw error;
      const entry = error instanceof CoreTimeout ? E.coreTimeout : E.coreUnavailable;
      // A forced fault simulates an outage of the core that the reconciler would wait out: it
      // leaves the operation alone meanwhile, so that a repeat made by hand still executes
      // (docs/sandbox.md, "Scenarios").
      const notBefore = job.scenario === undefined ? 0 : this.#options.clock.now() + scenarioOutageMs;
      await this.#recordUnknown(inFlight(job, claimedAt), entry, error, notBefore);
      return { kind: 'unknown', entry };
    }
    if (settlement.status === 'Rejected') {
      return this.#recordRejected(inFlight(job, claimedAt), settlement.refusal);
    }
    try {
      await this.#settlement.commit(inFlight(job, claimedAt), settlement, this.#options.clock.now());
    } catch (error) {
      // The core executed it: whoever settles the record now (a repeat, the reconciler) finds it executed.
      this.#options.logger.warn({ err: error, reference }, 'executed operation not settled; the reconciler will');
    }
    return { kind: 'executed', body: settlement.body };
  }

  /** A refusal: recorded Rejected, with its event and audit record, in a transaction of its own. */
  async #recordRejected(job: ExecutionJob, refusal: BusinessRefusal): Promise<ExecutionResult> {
    try {
      return await this.#settlement.commit(job, { status: 'Rejected', refusal }, this.#options.clock.now());
    } catch (failure) {
      const recovered = await recoverClaim(this.#options.store.db, failure, job.record);
      if (recovered) return recovered;
      throw failure;
    }
  }

  /** The outcome is unknown: held so, with the request, until a repeat or the reconciler settles it. */
  async #recordUnknown(job: ExecutionJob, entry: ErrorEntry, cause: unknown, notBeforeEpochMs = 0): Promise<void> {
    const { store, logger } = this.#options;
    const { reference, accepted } = job.record;
    logger.warn({ err: cause, reference, operation: job.operation.name }, accepted ? 'pending operation not executed yet: core outcome unknown' : 'core outcome unknown');
    try {
      await this.#settlement.holdUnknown(job, this.#options.clock.now(), entry, notBeforeEpochMs);
    } catch (error) {
      // A concurrent request or instance holds the operation meanwhile: its record is the one that counts.
      if (!(await recoverClaim(store.db, error, job.record))) logger.error({ err: error, reference }, 'could not record an unknown outcome');
    }
  }
}

/** The job as its record stands once claimed at `claimedAt`: InFlight, guarded by that instant. */
function inFlight(job: ExecutionJob, claimedAt: number): ExecutionJob {
  return { ...job, from: { kind: 'stored', guard: { status: 'InFlight', updatedEpochMs: claimedAt } } };
}

/**
 * The claim and the core's work, inside one unit of work. Started together (their first
 * statements travel together), unless the claim checks the duplicate window first: then it
 * must decide before anything else runs. A failed claim wins over whatever the core made of a
 * transaction it aborted; the unit of work rolls back either way.
 */
async function claimAndRun<T>(claim: Promise<void>, run: () => Promise<T>, claimFirst: boolean): Promise<T> {
  if (claimFirst) {
    await claim;
    return run();
  }
  const [claimed, ran] = await Promise.allSettled([claim, run()]);
  if (claimed.status === 'rejected') throw claimed.reason;
  if (ran.status === 'rejected') throw ran.reason;
  return ran.value;
}

function embeddedFailureOf(error: unknown): CoreCallResult | undefined {
  if (error instanceof RollBack) return 'refused';
  if (error instanceof DuplicateInWindow || error instanceof ClaimLost || isUniqueViolation(error)) return undefined;
  return callResultOf(error);
}
