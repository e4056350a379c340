/**
 * Runs business operations with the guarantees of CONTRACT §4 and §8, the same way for every
 * operation: correlation ids consumed once per client, duplicate window, 200 / 202, a time-out
 * on the core, unknown outcomes reconciled on repeat, and an audit record in the operation's
 * own transaction.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AuditChainer } from '../audit/chain.js';
import { canonicalJson } from '../core/canonical-json.js';
import { errorCatalogue as E, BusinessRefusal, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import { CoreUnavailable, type UnitOfWork } from '../core/port.js';
import type { Logger } from '../log.js';
import { insertAuditEntry, type AuditEntry } from '../store/audit.js';
import type { Store } from '../store/connect.js';
import {
  findOperation,
  findOperationByCorrelation,
  findRecentDuplicate,
  insertOperation,
  isUniqueViolation,
  settleOperation,
  type OperationRecord,
} from '../store/operations.js';
import { createHash } from 'node:crypto';
import type { Principal } from './bearer-auth.js';
import { errorRecord, type ErrorRecord } from './error-record.js';

export interface OperationSpec<TCommand = unknown, TResult = unknown> {
  /** The operation's name in operation records and audit (SPEC's operation names). */
  operation: string;
  scope: string;
  family: Family;
  /** Checks that need no stored data; a BusinessRefusal here does not consume the correlation id. */
  validate(body: unknown, params: Readonly<Record<string, string>>): TCommand;
  execute(uow: UnitOfWork, reference: string, command: TCommand, principal: Principal): Promise<TResult>;
  /** After an unknown outcome: the result, if the core did execute the operation. */
  reconcile(reference: string): Promise<TResult | undefined>;
  present(result: TResult, reference: string): unknown;
  accepted(reference: string, acceptedAt: Date): unknown;
  /** The result shown for a pending operation the core refused, if the operation has one. */
  rejected?(reference: string, acceptedAt: Date): unknown;
  /** The outcome word recorded in the audit trail (e.g. Executed, PartiallyExecuted). */
  outcomeOf(result: TResult): string;
}

export interface Invocation {
  principal: Principal;
  correlationId: string;
  correlationSupplied: boolean;
  /** `POST /v1/...`: the error records' path. */
  path: string;
  body: unknown;
  /** Path parameters (e.g. the facility and installment of a loan execution). */
  params: Readonly<Record<string, string>>;
  respondAsync: boolean;
  channel: string | undefined;
  startedAtMs: number;
}

export type RunOutcome =
  | { kind: 'done'; status: 200; body: unknown; reference: string; result: unknown }
  | { kind: 'accepted'; status: 202; body: unknown; reference: string; preferenceApplied: boolean }
  | { kind: 'refused'; status: number; record: ErrorRecord; audited: boolean; headers?: Record<string, string> };

export interface RunnerOptions {
  store: Store;
  logger: Logger;
  chainer: AuditChainer;
  coreTimeoutMs: number;
  duplicateWindowSeconds: number;
  batchWindow: { startSecond: number; endSecond: number } | undefined;
  /** How often the worker looks for pending operations. */
  workerIntervalMs?: number;
}

class CoreTimeout extends Error {
  override name = 'CoreTimeout';
}

/** A concurrent request claimed the correlation id between our check and our write. */
class CorrelationTaken extends Error {}

/** A concurrent identical request (no correlation id) won the duplicate window. */
class DuplicateInWindow extends Error {
  constructor(readonly original: OperationRecord) {
    super('duplicate request within the window');
  }
}

/** What a pending operation keeps until it is executed. */
interface StoredRequest {
  body: unknown;
  params: Readonly<Record<string, string>>;
}

/** Pending operations executed per worker tick: bounds the work of one tick. */
const workerBatchMax = 20;

export class OperationRunner {
  readonly #options: RunnerOptions;
  readonly #specs = new Map<string, OperationSpec<any, any>>();
  #timer: NodeJS.Timeout | undefined;
  #working: Promise<void> | undefined;
  #stopped = false;

  constructor(options: RunnerOptions) {
    this.#options = options;
  }

  register(spec: OperationSpec<any, any>): void {
    this.#specs.set(spec.operation, spec);
  }

  start(): void {
    this.#timer = setInterval(() => this.kick(), this.#options.workerIntervalMs ?? 1_000);
    this.#timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#working;
  }

  inBatchWindow(now: Date = new Date()): boolean {
    const window = this.#options.batchWindow;
    if (!window) return false;
    const second = now.getUTCHours() * 3600 + now.getUTCMinutes() * 60 + now.getUTCSeconds();
    return window.startSecond <= window.endSecond
      ? second >= window.startSecond && second < window.endSecond
      : second >= window.startSecond || second < window.endSecond;
  }

  async run<TCommand, TResult>(spec: OperationSpec<TCommand, TResult>, call: Invocation): Promise<RunOutcome> {
    const { store } = this.#options;
    let command: TCommand;
    try {
      command = spec.validate(call.body, call.params);
    } catch (error) {
      if (error instanceof BusinessRefusal) return this.#refused(spec, call, error.entry, error.message, undefined, false);
      throw error;
    }

    const requestHash = createHash('sha256').update(`${call.path}\n${canonicalJson(call.body)}`).digest('hex');
    const existing = await findOperationByCorrelation(store.db, call.principal.clientKey, call.correlationId);
    let reference: string = randomUUID();
    let retryOfUnknown = false;
    if (existing) {
      if (existing.status !== 'Unknown' || existing.operation !== spec.operation) return this.#duplicate(spec, call, existing, E.duplicateCorrelationId);
      const found = await this.#reconcile(spec, existing);
      if (found) return this.#duplicate(spec, call, (await findOperation(store.db, existing.reference)) ?? existing, E.duplicateCorrelationId);
      reference = existing.reference;
      retryOfUnknown = true;
    } else if (!call.correlationSupplied && this.#options.duplicateWindowSeconds > 0) {
      const since = Date.now() - this.#options.duplicateWindowSeconds * 1000;
      const duplicate = await findRecentDuplicate(store.db, call.principal.clientKey, requestHash, since);
      if (duplicate) return this.#duplicate(spec, call, duplicate, E.duplicateRequest);
    }

    const record = this.#newRecord(spec, call, reference, requestHash);
    if (call.respondAsync || this.inBatchWindow()) return this.#accept(spec, call, record, retryOfUnknown);
    return this.#executeNow(spec, call, command, record, retryOfUnknown);
  }

  async #executeNow<TCommand, TResult>(
    spec: OperationSpec<TCommand, TResult>,
    call: Invocation,
    command: TCommand,
    record: OperationRecord,
    retryOfUnknown: boolean,
  ): Promise<RunOutcome> {
    const { store, chainer } = this.#options;
    const { reference } = record;
    const work = store.db.transaction().execute(async (uow) => {
      await this.#claim(uow, record, retryOfUnknown);
      const result = await spec.execute(uow, reference, command, call.principal);
      const body = spec.present(result, reference);
      await settleOperation(uow, reference, ['Pending'], { status: 'Executed', httpStatus: 200, result: body });
      await insertAuditEntry(uow, this.#audit(spec, call, reference, 200, spec.outcomeOf(result)));
      return { result, body };
    });
    try {
      const { result, body } = await withTimeout(work, this.#options.coreTimeoutMs);
      chainer.schedule();
      return { kind: 'done', status: 200, body, reference, result };
    } catch (error) {
      if (error instanceof CoreTimeout) {
        // The unit of work may still commit; only if it does not is the outcome held as unknown.
        work.then(
          () => chainer.schedule(),
          (late: unknown) => this.#recordUnknown(spec, call, record, retryOfUnknown, E.coreTimeout, late),
        );
        return this.#refused(spec, call, E.coreTimeout, `The core did not answer within ${this.#options.coreTimeoutMs} ms; repeat with x-correlation-id ${call.correlationId} to reconcile`, reference, true);
      }
      if (error instanceof CoreUnavailable) {
        await this.#recordUnknown(spec, call, record, retryOfUnknown, E.coreUnavailable, error);
        return this.#refused(spec, call, E.coreUnavailable, `The core banking system is unavailable; repeat with x-correlation-id ${call.correlationId} to reconcile`, reference, true);
      }
      if (error instanceof DuplicateInWindow) return this.#duplicate(spec, call, error.original, E.duplicateRequest);
      if (error instanceof CorrelationTaken || isUniqueViolation(error)) {
        const original = await findOperationByCorrelation(store.db, call.principal.clientKey, call.correlationId);
        if (original) return this.#duplicate(spec, call, original, E.duplicateCorrelationId);
      }
      if (error instanceof BusinessRefusal) return this.#recordRejected(spec, call, record, retryOfUnknown, error);
      throw error;
    }
  }

  /**
   * Consumes the correlation id inside the unit of work, or re-claims an unknown one. Without a
   * correlation id, the duplicate window is checked again here under a lock on the request hash,
   * so that concurrent identical requests cannot all pass the early check.
   */
  async #claim(uow: UnitOfWork, record: OperationRecord, retryOfUnknown: boolean): Promise<void> {
    if (!record.correlationSupplied && this.#options.duplicateWindowSeconds > 0) {
      if (this.#options.store.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`${record.clientKey}|${record.requestHash}`}, 0))`.execute(uow);
      }
      const since = Date.now() - this.#options.duplicateWindowSeconds * 1000;
      const duplicate = await findRecentDuplicate(uow, record.clientKey, record.requestHash, since);
      if (duplicate && duplicate.reference !== record.reference) throw new DuplicateInWindow(duplicate);
    }
    if (retryOfUnknown) {
      if (!(await settleOperation(uow, record.reference, ['Unknown'], { status: 'Pending', httpStatus: null, keepRequest: true }))) {
        throw new CorrelationTaken();
      }
      return;
    }
    await insertOperation(uow, record);
  }

  async #accept(spec: OperationSpec<any, any>, call: Invocation, record: OperationRecord, retryOfUnknown: boolean): Promise<RunOutcome> {
    const { store, chainer } = this.#options;
    const acceptedAt = new Date();
    try {
      await store.db.transaction().execute(async (uow) => {
        const request: StoredRequest = { body: call.body, params: call.params };
        await this.#claim(uow, { ...record, request }, retryOfUnknown);
        if (retryOfUnknown) await uow.updateTable('operations').set({ request: JSON.stringify(request) }).where('reference', '=', record.reference).execute();
        await insertAuditEntry(uow, this.#audit(spec, call, record.reference, 202, 'Pending'));
      });
    } catch (error) {
      if (error instanceof DuplicateInWindow) return this.#duplicate(spec, call, error.original, E.duplicateRequest);
      if (error instanceof CorrelationTaken || isUniqueViolation(error)) {
        const original = await findOperationByCorrelation(store.db, call.principal.clientKey, call.correlationId);
        if (original) return this.#duplicate(spec, call, original, E.duplicateCorrelationId);
      }
      throw error;
    }
    chainer.schedule();
    if (!this.inBatchWindow()) this.kick();
    return { kind: 'accepted', status: 202, body: spec.accepted(record.reference, acceptedAt), reference: record.reference, preferenceApplied: call.respondAsync };
  }

  /** For GET /v1/operations: an unknown outcome is settled from the core when the core knows it. */
  async refresh(record: OperationRecord): Promise<OperationRecord> {
    const spec = this.#specs.get(record.operation);
    if (record.status !== 'Unknown' || !spec) return record;
    try {
      if (await this.#reconcile(spec, record)) return (await findOperation(this.#options.store.db, record.reference)) ?? record;
    } catch (error) {
      this.#options.logger.warn({ err: error, reference: record.reference }, 'reconciliation failed');
    }
    return record;
  }

  async #reconcile(spec: OperationSpec<any, any>, existing: OperationRecord): Promise<boolean> {
    const found = await withTimeout(spec.reconcile(existing.reference), this.#options.coreTimeoutMs);
    if (found === undefined) return false;
    await settleOperation(this.#options.store.db, existing.reference, ['Unknown'], {
      status: 'Executed',
      httpStatus: 200,
      result: spec.present(found, existing.reference),
    });
    return true;
  }

  async #recordRejected(spec: OperationSpec<any, any>, call: Invocation, record: OperationRecord, retryOfUnknown: boolean, refusal: BusinessRefusal): Promise<RunOutcome> {
    const { store, chainer } = this.#options;
    const errorBody = errorRecord(refusal.entry, refusal.message, call.path, spec.family);
    try {
      await store.db.transaction().execute(async (uow) => {
        const outcome = { status: 'Rejected' as const, httpStatus: refusal.entry.status, error: errorBody };
        if (retryOfUnknown) {
          if (!(await settleOperation(uow, record.reference, ['Unknown'], outcome))) throw new CorrelationTaken();
        } else {
          await insertOperation(uow, { ...record, ...outcome });
        }
        await insertAuditEntry(uow, this.#audit(spec, call, record.reference, refusal.entry.status, 'Rejected', refusal.entry));
      });
    } catch (error) {
      if (error instanceof CorrelationTaken || isUniqueViolation(error)) {
        const original = await findOperationByCorrelation(store.db, call.principal.clientKey, call.correlationId);
        if (original) return this.#duplicate(spec, call, original, E.duplicateCorrelationId);
      }
      throw error;
    }
    chainer.schedule();
    return { kind: 'refused', status: refusal.entry.status, record: errorBody, audited: true };
  }

  async #recordUnknown(spec: OperationSpec<any, any>, call: Invocation, record: OperationRecord, retryOfUnknown: boolean, entry: ErrorEntry, cause: unknown): Promise<void> {
    const { store, logger, chainer } = this.#options;
    logger.warn({ err: cause, reference: record.reference, operation: spec.operation }, 'core outcome unknown');
    try {
      await store.db.transaction().execute(async (uow) => {
        if (!retryOfUnknown) {
          const error = errorRecord(entry, 'The core\'s outcome is unknown', call.path, spec.family);
          await insertOperation(uow, { ...record, status: 'Unknown', httpStatus: entry.status, error });
        }
        await insertAuditEntry(uow, this.#audit(spec, call, record.reference, entry.status, 'Unknown', entry));
      });
      chainer.schedule();
    } catch (error) {
      // A concurrent request consumed the id meanwhile: its record is the one that counts.
      if (!isUniqueViolation(error)) logger.error({ err: error, reference: record.reference }, 'could not record an unknown outcome');
    }
  }

  async #duplicate(spec: OperationSpec<any, any>, call: Invocation, original: OperationRecord, entry: ErrorEntry): Promise<RunOutcome> {
    const outcome = original.status === 'Rejected' ? `Rejected with ${original.httpStatus ?? ''}${rejectionCode(original)}` : original.status;
    const message =
      entry === E.duplicateCorrelationId
        ? `x-correlation-id ${call.correlationId} was already used by operation ${original.reference} (${outcome})`
        : `The same request was already received as operation ${original.reference} (${outcome}) within the duplicate window`;
    const refused = await this.#refused(spec, call, entry, message, original.reference, false);
    // The conflicting resource, as RFC 9110 suggests for 409: clients resolve their retry with it.
    return { ...refused, headers: { Location: `/v1/operations/${original.reference}` } } as RunOutcome;
  }

  async #refused(
    spec: OperationSpec<any, any>,
    call: Invocation,
    entry: ErrorEntry,
    message: string,
    reference: string | undefined,
    alreadyAudited: boolean,
  ): Promise<RunOutcome> {
    const record = errorRecord(entry, message, call.path, spec.family);
    if (!alreadyAudited) {
      await insertAuditEntry(this.#options.store.db, this.#audit(spec, call, reference ?? null, entry.status, 'Refused', entry));
      this.#options.chainer.schedule();
    }
    return { kind: 'refused', status: entry.status, record, audited: true };
  }

  #newRecord(spec: OperationSpec<any, any>, call: Invocation, reference: string, requestHash: string): OperationRecord {
    const now = new Date();
    return {
      reference,
      clientKey: call.principal.clientKey,
      correlationId: call.correlationId,
      correlationSupplied: call.correlationSupplied,
      operation: spec.operation,
      scope: spec.scope,
      path: call.path,
      requestHash,
      request: undefined,
      status: 'Pending',
      httpStatus: null,
      result: undefined,
      error: undefined,
      actor: { clientId: call.principal.clientKey, backboneUser: call.principal.backboneUser ?? null, workstation: call.principal.workstation ?? null, channel: call.channel ?? null },
      createdAt: now.toISOString(),
      createdEpochMs: now.getTime(),
      updatedAt: now.toISOString(),
    };
  }

  #audit(spec: OperationSpec<any, any>, call: Invocation, reference: string | null, httpStatus: number, outcome: string, entry?: ErrorEntry): AuditEntry {
    return auditEntry({
      operation: spec.operation,
      clientId: call.principal.clientKey,
      backboneUser: call.principal.backboneUser ?? null,
      workstation: call.principal.workstation ?? null,
      correlationId: call.correlationId,
      reference,
      httpStatus,
      outcome,
      durationMs: Date.now() - call.startedAtMs,
      details: { path: call.path, channel: call.channel ?? null, ...(entry && spec ? { code: codeFor(entry, spec.family) } : {}) },
    });
  }

  /** Executes pending operations (202 answers) unless the core's batch window is open. */
  kick(): void {
    if (this.#working || this.#stopped) return;
    this.#working = (async () => {
      try {
        while (!this.#stopped && !this.inBatchWindow()) {
          const done = await this.#processPending();
          if (done < workerBatchMax) break;
        }
      } catch (error) {
        this.#options.logger.error({ err: error }, 'pending operations worker failed');
      }
    })().finally(() => {
      this.#working = undefined;
    });
  }

  async #processPending(): Promise<number> {
    const { store } = this.#options;
    const rows = await store.db
      .selectFrom('operations')
      .select('reference')
      .where('status', '=', 'Pending')
      .where('request', 'is not', null)
      .orderBy('created_epoch_ms')
      .limit(workerBatchMax)
      .execute();
    for (const { reference } of rows) await this.#processOne(reference);
    return rows.length;
  }

  async #processOne(reference: string): Promise<void> {
    const { store, chainer, logger } = this.#options;
    const pending = await findOperation(store.db, reference);
    const spec = pending && this.#specs.get(pending.operation);
    if (!pending || pending.status !== 'Pending' || !spec) return;
    const actor = pending.actor as { clientId: string; backboneUser: string | null; workstation: string | null; channel: string | null };
    const principal: Principal = {
      clientKey: actor.clientId,
      clientId: actor.clientId,
      issuer: '',
      scopes: new Set([spec.scope]),
      backboneUser: actor.backboneUser ?? undefined,
      workstation: actor.workstation ?? undefined,
    };
    const request = pending.request as StoredRequest;
    const call: Invocation = {
      principal,
      correlationId: pending.correlationId,
      correlationSupplied: pending.correlationSupplied,
      path: pending.path,
      body: request.body,
      params: request.params,
      respondAsync: true,
      channel: actor.channel ?? undefined,
      startedAtMs: Date.now(),
    };
    try {
      const command = spec.validate(request.body, request.params);
      await withTimeout(
        store.db.transaction().execute(async (uow) => {
          // Whoever settles the operation first executes it; another instance's worker skips it.
          if (!(await settleOperation(uow, reference, ['Pending'], { status: 'Pending', httpStatus: null }))) return;
          const result = await spec.execute(uow, reference, command, principal);
          if (!(await settleOperation(uow, reference, ['Pending'], { status: 'Executed', httpStatus: 200, result: spec.present(result, reference) }))) {
            throw new CorrelationTaken();
          }
          await insertAuditEntry(uow, this.#audit(spec, call, reference, 200, spec.outcomeOf(result)));
        }),
        this.#options.coreTimeoutMs,
      );
    } catch (error) {
      if (error instanceof BusinessRefusal) {
        const record = errorRecord(error.entry, error.message, pending.path, spec.family);
        await store.db.transaction().execute(async (uow) => {
          const result = spec.rejected?.(reference, new Date(pending.createdAt));
          if (await settleOperation(uow, reference, ['Pending'], { status: 'Rejected', httpStatus: error.entry.status, error: record, result })) {
            await insertAuditEntry(uow, this.#audit(spec, call, reference, error.entry.status, 'Rejected', error.entry));
          }
        });
      } else {
        // Core unavailable or slow: the operation stays pending and the next tick tries again.
        logger.warn({ err: error, reference }, 'pending operation not executed yet');
      }
    }
    chainer.schedule();
  }
}

export function auditEntry(fields: Omit<AuditEntry, 'id' | 'recordedAt'>): AuditEntry {
  return { id: randomUUID(), recordedAt: new Date().toISOString(), ...fields };
}

function codeFor(entry: ErrorEntry, family: Family): string | null {
  return entry.family === 'both' || entry.family === family ? `${family}-${entry.status}-${String(entry.number).padStart(3, '0')}` : null;
}

function rejectionCode(record: OperationRecord): string {
  const code = (record.error as ErrorRecord | undefined)?.errordetail?.[0]?.code;
  return code ? ` ${code}` : '';
}

function withTimeout<T>(work: Promise<T>, timeoutMs: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CoreTimeout(`no answer within ${timeoutMs} ms`)), timeoutMs);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
