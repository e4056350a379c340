/**
 * The bank as the console shows it (issue 11): customers, accounts with live balances, an
 * account's postings and balance over time, term deposits, loan facilities. Read through the
 * port's read side (CoreRecords), so the same views work with the embedded core and with a remote
 * one (`--core-url`): the core's records never come from the API's own database. A core that does
 * not serve the read side (a bank's may not) makes these views answer 501 saying so; a core that
 * fails answers 502, one that is late 504, while the API's own views (operations, audit, clients)
 * still work.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { CoreSideNotServed, CoreTimeout, CoreUnavailable, hasRecords, type CoreBankingPort, type CoreRecords } from '../../core/port.js';
import { accountView, balanceHistory, loanFacilityView, postingsOffsetMax, postingsPage, termDepositView } from '../bank-views.js';
import { OperatorError } from '../errors.js';
import { logLimitDefault, pageParameters, pageQuery, recordsLimitDefault } from './query.js';

export interface BankRoutesOptions {
  /** The core behind the port: its read side answers these views. */
  core: CoreBankingPort;
}

const identifier = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' } as const;

/** limit (default and most: 500) and offset of a list of the bank's records. */
const pageOf = (query: { limit?: string; offset?: string }) => pageParameters(query, { limitDefault: recordsLimitDefault });

/** The core's failures as the operator API answers them. */
async function fromCore<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CoreSideNotServed) throw new OperatorError(501, `Not available: ${error.message}; operations, audit and clients still work`);
    if (error instanceof CoreTimeout) throw new OperatorError(504, `${error.message}; try again`);
    if (error instanceof CoreUnavailable) throw new OperatorError(502, `${error.message}; try again`);
    throw error;
  }
}

export function bankRoutes(options: BankRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    const { core } = options;
    const served: CoreRecords | undefined = hasRecords(core) ? core : undefined;
    const records = (): CoreRecords => {
      if (!served) throw new OperatorError(501, 'Not available: the core does not serve the read side for operators (docs/core-port.md); operations, audit and clients still work');
      return served;
    };

    app.get<{ Querystring: { limit?: string; offset?: string } }>(
      '/customers',
      { schema: { hide: true, querystring: { type: 'object', additionalProperties: false, properties: pageQuery } } },
      async (request) => {
        const page = await fromCore(() => records().listCustomers(pageOf(request.query)));
        return { customers: page.items, more: page.more };
      },
    );

    app.get<{ Querystring: { customerReference?: string; kind?: 'customer' | 'term_deposit' | 'loan' | 'internal'; limit?: string; offset?: string } }>(
      '/accounts',
      {
        schema: {
          hide: true,
          querystring: {
            type: 'object',
            additionalProperties: false,
            properties: { customerReference: identifier, kind: { type: 'string', enum: ['customer', 'term_deposit', 'loan', 'internal'] }, ...pageQuery },
          },
        },
      },
      async (request) => {
        const { customerReference, kind } = request.query;
        const page = await fromCore(() => records().listAccounts({ customerReference, kind }, pageOf(request.query)));
        return { accounts: page.items.map(accountView), more: page.more };
      },
    );

    const accountParams = { type: 'object', required: ['accountNumber'], properties: { accountNumber: identifier } } as const;
    const requireAccount = async (accountNumber: string) => {
      const account = await fromCore(() => records().findAccount(accountNumber));
      if (!account) throw new OperatorError(404, `No account ${accountNumber}: GET /operator/v1/accounts lists them`);
      return accountView(account);
    };

    app.get<{ Params: { accountNumber: string } }>('/accounts/:accountNumber', { schema: { hide: true, params: accountParams } }, async (request) => requireAccount(request.params.accountNumber));

    app.get<{ Params: { accountNumber: string }; Querystring: { limit?: string; offset?: string } }>(
      '/accounts/:accountNumber/postings',
      { schema: { hide: true, params: accountParams, querystring: { type: 'object', additionalProperties: false, properties: pageQuery } } },
      async (request) => {
        // Not as deep as other lists: each posting's balance after it sums every newer posting.
        const { limit, offset } = pageParameters(request.query, { limitDefault: logLimitDefault, offsetMax: postingsOffsetMax });
        const account = await requireAccount(request.params.accountNumber);
        return { account, ...(await fromCore(() => postingsPage(records(), account.accountNumber, limit, offset))) };
      },
    );

    app.get<{ Params: { accountNumber: string } }>('/accounts/:accountNumber/balance-history', { schema: { hide: true, params: accountParams } }, async (request) => {
      const account = await requireAccount(request.params.accountNumber);
      return fromCore(() => balanceHistory(records(), account));
    });

    app.get<{ Querystring: { status?: string; limit?: string; offset?: string } }>(
      '/term-deposits',
      {
        schema: {
          hide: true,
          querystring: { type: 'object', additionalProperties: false, properties: { status: { type: 'string', minLength: 1, maxLength: 32, pattern: '^[A-Za-z]+$' }, ...pageQuery } },
        },
      },
      async (request) => {
        const page = await fromCore(() => records().listTermDeposits({ status: request.query.status }, pageOf(request.query)));
        return { termDeposits: page.items.map(termDepositView), more: page.more };
      },
    );

    app.get<{ Querystring: { limit?: string; offset?: string } }>(
      '/loan-facilities',
      { schema: { hide: true, querystring: { type: 'object', additionalProperties: false, properties: pageQuery } } },
      async (request) => {
        const page = await fromCore(() => records().listLoanFacilities({}, pageOf(request.query)));
        return { loanFacilities: page.items.map(loanFacilityView), more: page.more };
      },
    );
  };
}
