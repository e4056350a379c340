/**
 * The bank as the console shows it (issue 11): customers, accounts with live balances, an
 * account's postings and balance over time, term deposits, loan facilities. With the embedded
 * core these read the core's tables in the store directly. With a remote core (`--core-url`) the
 * bank lives in another database the API cannot read: these views answer 501 and say so, while
 * the API's own views (operations, audit, clients) still work.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import type { Store } from '../../store/connect.js';
import {
  balanceHistory,
  findAccountView,
  listAccounts,
  listCustomers,
  listLoanFacilities,
  listPostings,
  listRowsMax,
  listTermDeposits,
  postingsOffsetMax,
} from '../../store/operator-queries.js';
import { OperatorError } from '../errors.js';
import { countParameter, countSchema } from './query.js';

export interface BankRoutesOptions {
  store: Store;
  /** False with a remote core: the bank's records are not in this store. */
  embeddedCore: boolean;
}

const identifier = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' } as const;

export function bankRoutes(options: BankRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { store } = options;
    app.addHook('preHandler', async () => {
      if (!options.embeddedCore) throw new OperatorError(501, 'Not available: the core is remote (--core-url), and its records are in its own database; operations, audit and clients still work');
    });

    app.get('/customers', { schema: { hide: true } }, async () => ({ customers: await listCustomers(store.db) }));

    app.get<{ Querystring: { customerReference?: string; kind?: string } }>(
      '/accounts',
      {
        schema: {
          hide: true,
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { customerReference: identifier, kind: { type: 'string', enum: ['customer', 'term_deposit', 'loan', 'internal'] } },
          },
        },
      },
      async (request) => ({ accounts: await listAccounts(store.db, request.query) }),
    );

    const accountParams = { type: 'object', required: ['accountNumber'], properties: { accountNumber: identifier } } as const;
    const requireAccount = async (accountNumber: string) => {
      const account = await findAccountView(store.db, accountNumber);
      if (!account) throw new OperatorError(404, `No account ${accountNumber}: GET /operator/v1/accounts lists them`);
      return account;
    };

    app.get<{ Params: { accountNumber: string } }>('/accounts/:accountNumber', { schema: { hide: true, params: accountParams } }, async (request) => requireAccount(request.params.accountNumber));

    app.get<{ Params: { accountNumber: string }; Querystring: { limit?: string; offset?: string } }>(
      '/accounts/:accountNumber/postings',
      {
        schema: {
          hide: true,
          params: accountParams,
          querystring: { type: 'object', additionalProperties: false, properties: { limit: countSchema, offset: countSchema } },
        },
      },
      async (request) => {
        const limit = countParameter('limit', request.query.limit, { defaultValue: 50, minimum: 1, maximum: listRowsMax });
        const offset = countParameter('offset', request.query.offset, { defaultValue: 0, minimum: 0, maximum: postingsOffsetMax });
        const account = await requireAccount(request.params.accountNumber);
        return { account, ...(await listPostings(store.db, account, limit, offset)) };
      },
    );

    app.get<{ Params: { accountNumber: string } }>('/accounts/:accountNumber/balance-history', { schema: { hide: true, params: accountParams } }, async (request) =>
      balanceHistory(store.db, await requireAccount(request.params.accountNumber)),
    );

    app.get<{ Querystring: { status?: string; limit?: string } }>(
      '/term-deposits',
      {
        schema: {
          hide: true,
          querystring: { type: 'object', additionalProperties: false, properties: { status: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[A-Za-z]+$' }, limit: countSchema } },
        },
      },
      async (request) => ({
        termDeposits: await listTermDeposits(store.db, { status: request.query.status, limit: countParameter('limit', request.query.limit, { defaultValue: 100, minimum: 1, maximum: listRowsMax }) }),
      }),
    );

    app.get('/loan-facilities', { schema: { hide: true } }, async () => ({ loanFacilities: await listLoanFacilities(store.db) }));
  };
}
