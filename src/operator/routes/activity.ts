/**
 * The API's own records as the console shows them (issue 11): operations with their outcome, the
 * audit trail and its chain's verification, the clients (never a secret), operations per minute,
 * and the operations the core refused with a refusal coregate cannot name (a finding of
 * `coregate check`, src/store/unrecognised-core-refusals.ts).
 * They read the API's store, so they work with the embedded and with a remote core alike.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { verifyAuditChain, type ChainVerification } from '../../audit/chain.js';
import type { Store } from '../../store/connect.js';
import { findOperationView, listAuditRecords, listClientViews, listOperations, operationsPerMinute } from '../../store/operator-queries.js';
import { findUnrecognisedCoreRefusals, unrecognisedRefusalLookbackMs } from '../../store/unrecognised-core-refusals.js';
import { OperatorError } from '../errors.js';
import { logLimitDefault, pageFromOneMore, pageParameters, pageQuery, recordsLimitDefault } from './query.js';
import type { Clock } from '../../core/clock.js';

export interface ActivityRoutesOptions {
  store: Store;
  /** The instance's clock: the operations-per-minute window and how long a chain verification is reused. */
  clock: Clock;
}

/**
 * Verifying the chain reads every record: the console asks every few seconds, so one answer
 * serves every asker for this long (the page shows when it was verified).
 */
const chainVerificationReuseMs = 5_000;
/** Operations listed with the count of refusals coregate cannot name: the newest, enough to follow one (the count is exact). */
const unrecognisedRefusalsListedMax = 20;
/** limit (default 50) and offset of a log that only grows: operations, audit records. */
const logPageOf = (query: { limit?: string; offset?: string }) => pageParameters(query, { limitDefault: logLimitDefault });

export function activityRoutes(options: ActivityRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { store, clock } = options;
    let verification: { at: number; result: Promise<ChainVerification> } | undefined;

    app.get<{ Querystring: { status?: string; limit?: string; offset?: string } }>(
      '/operations',
      {
        schema: {
          hide: true,
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { status: { type: 'string', enum: ['Pending', 'InFlight', 'Unknown', 'Executed', 'Rejected'] }, ...pageQuery },
          },
        },
      },
      async (request) => {
        const { limit, offset } = logPageOf(request.query);
        const page = pageFromOneMore(await listOperations(store.db, { status: request.query.status, limit: limit + 1, offset }), limit);
        return { operations: page.items, more: page.more };
      },
    );

    app.get<{ Params: { reference: string } }>(
      '/operations/:reference',
      { schema: { hide: true, params: { type: 'object', required: ['reference'], properties: { reference: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9-]+$' } } } } },
      async (request) => {
        const operation = await findOperationView(store.db, request.params.reference);
        if (!operation) throw new OperatorError(404, `No operation ${request.params.reference}: GET /operator/v1/operations lists them`);
        return operation;
      },
    );

    app.get<{ Querystring: { limit?: string; offset?: string } }>(
      '/audit',
      { schema: { hide: true, querystring: { type: 'object', additionalProperties: false, properties: pageQuery } } },
      async (request) => {
        const { limit, offset } = logPageOf(request.query);
        const page = pageFromOneMore(await listAuditRecords(store.db, limit + 1, offset), limit);
        return { records: page.items, more: page.more };
      },
    );

    app.get('/audit/verification', { schema: { hide: true } }, async () => {
      const now = clock.now();
      if (!verification || now - verification.at > chainVerificationReuseMs) {
        verification = { at: now, result: verifyAuditChain(store) };
        // A failed verification is not reused: the next asker tries again.
        verification.result.catch(() => {
          verification = undefined;
        });
      }
      const { at, result } = verification;
      return { ...(await result), verifiedAt: new Date(at).toISOString() };
    });

    // Paged in the store (by realm and client id), as the operations and audit records are.
    app.get<{ Querystring: { limit?: string; offset?: string } }>(
      '/clients',
      { schema: { hide: true, querystring: { type: 'object', additionalProperties: false, properties: pageQuery } } },
      async (request) => {
        const { limit, offset } = pageParameters(request.query, { limitDefault: recordsLimitDefault });
        const page = pageFromOneMore(await listClientViews(store.db, { limit: limit + 1, offset }), limit);
        return { clients: page.items, more: page.more };
      },
    );

    // What `coregate check` reports as a finding (src/cli/check.ts): the core answers outside its protocol.
    app.get('/findings/unrecognised-core-refusals', { schema: { hide: true } }, async () => {
      const found = await findUnrecognisedCoreRefusals(store.db, clock.now() - unrecognisedRefusalLookbackMs, unrecognisedRefusalsListedMax);
      return { reason: 'REJECTED_BY_CORE', lookbackDays: unrecognisedRefusalLookbackMs / 86_400_000, ...found };
    });

    app.get('/metrics/operations-per-minute', { schema: { hide: true } }, async () => operationsPerMinute(store.db, clock.now()));
  };
}
