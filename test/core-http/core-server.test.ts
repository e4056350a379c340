/**
 * The remote core protocol's server (docs/core-protocol.md), through Fastify's inject over the
 * reference core on a fresh SQLite store: the answers' shapes and statuses, a refusal as a
 * business answer (200), the reference as idempotency key, 400 for a malformed command with
 * nothing executed, 404 NotFound versus an unknown route, 500 without its cause, readiness (on
 * PostgreSQL too: a database that takes no writes is not ready), and the OpenAPI 3.1 document that
 * every observed answer validates against.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { coreRoutes } from '../../src/core-http/core-routes.js';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import type { FastifyInstance } from 'fastify';
import { buildCoreServer } from '../../src/core-http/core-server.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import type { CoreBankingPort } from '../../src/core/port.js';
import { createLogger } from '../../src/log.js';
import type { Store } from '../../src/store/connect.js';
import { findAccount } from '../../src/reference-core/storage/banking.js';
import { demoDataFile } from '../helpers/server.js';
import { adminQuery, storeTargets } from '../helpers/stores.js';
import { waitFor } from '../helpers/wait.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';

const sqlite = storeTargets.find((target) => target.name === 'sqlite');
const postgres = storeTargets.find((target) => target.name === 'postgres');
const silent = createLogger({ level: 'silent' });

const termDepositPath = (reference: string) => `/core/v1/term-deposit-constitutions/${reference}`;
const loanPath = (reference: string) => `/core/v1/loan-installment-executions/${reference}`;

function depositCommand(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    customerReference: 'C0001',
    productCode: 'TDFIX',
    componentCode: 'TD30-365',
    principalMinor: '100000',
    currency: 'USD',
    ratePercent: '5.25',
    numberOfDays: 90,
    valueDate: '2026-03-02',
    sourceAccount: '1000000001',
    interestAccount: '1000000002',
    description: null,
    ...fields,
  };
}

function loanCommand(fields: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    loanId: '7000000001',
    sequence: 1,
    loanType: 'CRDE',
    parameterType: 'DocumentaryRemittance',
    amountMinor: '100000',
    currency: 'USD',
    paymentAccount: '1000000001',
    expenseAccount: '1000000002',
    ...fields,
  };
}

/** Validates observed answers against the schemas the served OpenAPI document declares. */
class Documented {
  readonly #ajv = new Ajv2020.default({ allErrors: true, strict: false });
  constructor(readonly doc: any) {}

  check(template: string, method: string, status: number, body: unknown): void {
    const declared = this.doc.paths?.[template]?.[method]?.responses?.[String(status)];
    assert.ok(declared, `${method.toUpperCase()} ${template} → ${status} is documented`);
    const schema = declared.content?.['application/json']?.schema;
    assert.ok(schema, `${method.toUpperCase()} ${template} → ${status} documents a JSON body`);
    // The document names its schemas (components) and refers to them: compiled with them at hand.
    const validate = this.#ajv.compile({ ...schema, components: this.doc.components });
    assert.ok(validate(body), `${method.toUpperCase()} ${template} → ${status}: ${this.#ajv.errorsText(validate.errors)}\n${JSON.stringify(body)}`);
  }
}

describe('core server over the reference core [sqlite]', { skip: sqlite?.skip }, () => {
  let app: FastifyInstance;
  let store: Store;
  let drop: () => Promise<void> = async () => {};
  let documented: Documented;
  const balance = async (account: string) => (await findAccount(coreTablesOf(store.db), account))?.balanceMinor;

  before(async () => {
    if (!sqlite) throw new Error('no SQLite target');
    const created = await sqlite.create();
    drop = created.drop;
    const opened = await openReferenceCore({ db: created.url, dataFile: demoDataFile, businessDate: undefined }, silent);
    store = opened.store;
    app = await buildCoreServer({ core: opened.core, logger: silent, version: 'test' });
    await app.ready();
    documented = new Documented((await app.inject({ method: 'GET', url: '/openapi.json' })).json());
  });
  after(async () => {
    await app?.close();
    await store?.close();
    await drop();
  });

  const post = (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json', ...headers }, payload: typeof payload === 'string' ? payload : JSON.stringify(payload) });

  test('/openapi.json is a valid OpenAPI 3.1 document of every protocol route, with 200/400/404/500 answers declared', async () => {
    const doc = structuredClone(documented.doc);
    assert.equal(doc.openapi, '3.1.0');
    await SwaggerParser.validate(structuredClone(doc));
    assert.deepEqual(Object.keys(doc.paths).sort(), [
      '/core/v1/accounts',
      '/core/v1/accounts/{accountNumber}',
      '/core/v1/accounts/{accountNumber}/postings',
      '/core/v1/business-date',
      '/core/v1/business-date/advance',
      '/core/v1/customers',
      '/core/v1/data',
      '/core/v1/directory/users',
      '/core/v1/directory/users/{login}',
      '/core/v1/directory/workstations',
      '/core/v1/directory/workstations/{id}',
      '/core/v1/events',
      '/core/v1/fences/{reference}',
      '/core/v1/ledger-check',
      '/core/v1/loan-facilities',
      '/core/v1/loan-installment-executions/{reference}',
      '/core/v1/posted-references',
      '/core/v1/term-deposit-constitutions/{reference}',
      '/core/v1/term-deposits',
      '/core/v1/term-deposits/{contractNumber}',
      '/health/ready',
    ]);
    // Every route of the table is in the document, under the port method it calls.
    const operationIds = Object.values(doc.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    for (const row of coreRoutes) assert.ok(operationIds.includes(row.portMethod), `${row.method} ${row.path} is documented as ${row.portMethod}`);
    for (const template of ['/core/v1/term-deposit-constitutions/{reference}', '/core/v1/loan-installment-executions/{reference}']) {
      assert.deepEqual(Object.keys(doc.paths[template].post.responses).sort(), ['200', '400', '500']);
      assert.deepEqual(Object.keys(doc.paths[template].get.responses).sort(), ['200', '404', '500']);
    }
  });

  test('docs/core-protocol.md documents every route and method of the served document', () => {
    const docs = readFileSync(join(repoRoot, 'docs/core-protocol.md'), 'utf8');
    for (const [template, methods] of Object.entries(documented.doc.paths as Record<string, Record<string, unknown>>)) {
      for (const method of Object.keys(methods)) {
        assert.ok(docs.includes(`\`${method.toUpperCase()} ${template}\``), `docs/core-protocol.md lists ${method.toUpperCase()} ${template}`);
      }
    }
  });

  test('POST term deposit → 200 {status: Executed, result} with amounts as decimal strings of minor units; the source account is debited', async () => {
    const reference = randomUUID();
    const before = await balance('1000000001');
    const response = await post(termDepositPath(reference), depositCommand());
    assert.equal(response.statusCode, 200);
    const body = response.json();
    documented.check('/core/v1/term-deposit-constitutions/{reference}', 'post', 200, body);
    assert.equal(body.status, 'Executed');
    assert.equal(body.result.principalMinor, '100000');
    assert.equal(body.result.expectedInterestMinor, '1327');
    assert.equal(body.result.maturityDate, '2026-06-01');
    assert.equal(body.result.operationReference, reference);
    assert.equal((before ?? 0n) - ((await balance('1000000001')) ?? 0n), 100_000n);
  });

  test('the reference in the path is the idempotency key: POSTing it again answers the original outcome, nothing moves again', async () => {
    const reference = randomUUID();
    const first = await post(termDepositPath(reference), depositCommand({ principalMinor: '200000' }));
    const before = await balance('1000000001');
    const again = await post(termDepositPath(reference), depositCommand({ principalMinor: '300000' }));
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().result.contractNumber, first.json().result.contractNumber);
    assert.equal(again.json().result.principalMinor, '200000');
    assert.equal(await balance('1000000001'), before);
  });

  test('a broken rule is a business answer: 200 {status: Rejected, refusal: {name, code, message}}; GET answers the same refusal', async () => {
    const reference = randomUUID();
    const response = await post(termDepositPath(reference), depositCommand({ principalMinor: '30000000' }));
    assert.equal(response.statusCode, 200);
    const body = response.json();
    documented.check('/core/v1/term-deposit-constitutions/{reference}', 'post', 200, body);
    assert.deepEqual(Object.keys(body).sort(), ['refusal', 'status']);
    assert.equal(body.status, 'Rejected');
    assert.equal(body.refusal.name, 'insufficientFundsSource');
    assert.equal(body.refusal.code, 'TD-422-002');
    assert.match(body.refusal.message, /1000000001/);
    const lookup = await app.inject({ method: 'GET', url: termDepositPath(reference) });
    assert.equal(lookup.statusCode, 200);
    assert.deepEqual(lookup.json(), body);
  });

  test('loan installment: 200 Executed with charges as minor units; refusals carry ML codes; GET by reference', async () => {
    const reference = randomUUID();
    const response = await post(loanPath(reference), loanCommand());
    assert.equal(response.statusCode, 200);
    const body = response.json();
    documented.check('/core/v1/loan-installment-executions/{reference}', 'post', 200, body);
    assert.equal(body.status, 'Executed');
    assert.deepEqual(
      [body.result.amountMinor, body.result.commissionMinor, body.result.feeMinor, body.result.taxMinor, body.result.facilityStatus],
      ['100000', '1000', '2500', '560', 'PartiallyExecuted'],
    );
    const lookup = await app.inject({ method: 'GET', url: loanPath(reference) });
    documented.check('/core/v1/loan-installment-executions/{reference}', 'get', 200, lookup.json());
    assert.deepEqual(lookup.json(), body);

    const refused = await post(loanPath(randomUUID()), loanCommand({ loanId: '7999999999' }));
    assert.equal(refused.statusCode, 200);
    assert.deepEqual({ ...refused.json().refusal, message: undefined }, { name: 'facilityNotFound', code: 'ML-404-001', message: undefined });
  });

  test('GET of a reference never executed → 404 {status: NotFound}; an unknown route → 404 NO_ROUTE, which no reader takes for NotFound', async () => {
    for (const url of [termDepositPath(randomUUID()), loanPath(randomUUID())]) {
      const response = await app.inject({ method: 'GET', url });
      assert.equal(response.statusCode, 404);
      assert.deepEqual(response.json(), { status: 'NotFound' });
    }
    const route = await app.inject({ method: 'GET', url: '/core/v2/term-deposit-constitutions/x' });
    assert.equal(route.statusCode, 404);
    assert.equal(route.json().error, 'NO_ROUTE');
    assert.equal(route.json().status, undefined);
  });

  test('term deposits and the directory: 200 with the record, 404 {status: NotFound} when unknown', async () => {
    const created = await post(termDepositPath(randomUUID()), depositCommand());
    const contractNumber = created.json().result.contractNumber as string;
    const retrieved = await app.inject({ method: 'GET', url: `/core/v1/term-deposits/${contractNumber}` });
    assert.equal(retrieved.statusCode, 200);
    documented.check('/core/v1/term-deposits/{contractNumber}', 'get', 200, retrieved.json());
    assert.deepEqual(retrieved.json(), created.json().result);
    assert.deepEqual((await app.inject({ method: 'GET', url: '/core/v1/term-deposits/TD-NONE' })).json(), { status: 'NotFound' });

    assert.deepEqual((await app.inject({ method: 'GET', url: '/core/v1/directory/users/svc-treasury' })).json(), { status: 'Active' });
    assert.deepEqual((await app.inject({ method: 'GET', url: '/core/v1/directory/users/former-clerk' })).json(), { status: 'Disabled' });
    const unknownUser = await app.inject({ method: 'GET', url: '/core/v1/directory/users/nobody' });
    assert.equal(unknownUser.statusCode, 404);
    assert.deepEqual(unknownUser.json(), { status: 'NotFound' });
    assert.deepEqual((await app.inject({ method: 'GET', url: '/core/v1/directory/workstations/WS-TREASURY-01' })).json(), { status: 'Active' });
    assert.equal((await app.inject({ method: 'GET', url: '/core/v1/directory/workstations/WS-NONE' })).statusCode, 404);
  });

  const malformed: Array<[string, string, unknown]> = [
    ['an amount as a JSON number', 'td', depositCommand({ principalMinor: 100000 })],
    ['an amount with decimals', 'td', depositCommand({ principalMinor: '1000.00' })],
    ['an amount of zero', 'td', depositCommand({ principalMinor: '0' })],
    ['an amount with a leading zero', 'td', depositCommand({ principalMinor: '0100' })],
    ['a missing field', 'td', Object.fromEntries(Object.entries(depositCommand()).filter(([key]) => key !== 'sourceAccount'))],
    ['a date that is no calendar date', 'td', depositCommand({ valueDate: '2026-02-30' })],
    ['neither numberOfDays nor maturityDate', 'td', depositCommand({ numberOfDays: undefined })],
    ['a maturity not after the value date', 'td', depositCommand({ numberOfDays: undefined, maturityDate: '2026-03-02' })],
    ['a rate of 0', 'td', depositCommand({ ratePercent: '0' })],
    ['a rate above 100', 'td', depositCommand({ ratePercent: '100.5' })],
    ['an unknown currency', 'td', depositCommand({ currency: 'XYZ' })],
    ['a body that is not JSON', 'td', '{"customerReference":'],
    ['an amount without its currency', 'ml', loanCommand({ currency: undefined })],
    ['a sequence of 0', 'ml', loanCommand({ sequence: 0 })],
  ];
  for (const [what, operation, payload] of malformed) {
    test(`a malformed command → 400 BAD_REQUEST and nothing executed: ${what}`, async () => {
      const reference = randomUUID();
      const path = operation === 'td' ? termDepositPath(reference) : loanPath(reference);
      const before = await balance('1000000001');
      const response = await post(path, payload);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(response.json().error, 'BAD_REQUEST');
      assert.equal(typeof response.json().message, 'string');
      documented.check(operation === 'td' ? '/core/v1/term-deposit-constitutions/{reference}' : '/core/v1/loan-installment-executions/{reference}', 'post', 400, response.json());
      assert.equal((await app.inject({ method: 'GET', url: path })).statusCode, 404, 'the reference was not consumed');
      assert.equal(await balance('1000000001'), before);
    });
  }

  test('a reference outside 1-128 characters of A-Z a-z 0-9 . _ : - → 400', async () => {
    assert.equal((await post(termDepositPath('a'.repeat(129)), depositCommand())).statusCode, 400);
    assert.equal((await post(termDepositPath('with%20space'), depositCommand())).statusCode, 400);
  });

  test('a body that is not application/json → 415; over 64 KiB → 413', async () => {
    const wrongType = await post(termDepositPath(randomUUID()), JSON.stringify(depositCommand()), { 'content-type': 'text/plain' });
    assert.equal(wrongType.statusCode, 415);
    const tooLarge = await post(termDepositPath(randomUUID()), JSON.stringify(depositCommand({ padding: 'x'.repeat(70 * 1024) })));
    assert.equal(tooLarge.statusCode, 413);
  });

  test('GET /health/ready → 200 {status: ready} while the core\'s store answers', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(response.json(), { status: 'ready' });
  });

  // ----- Business days (docs/business-days.md). Last: they move the business date. -----

  test('GET business-date, POST advance → 200 EndOfDayReport, again → the no-op report; events in sequence; every answer as documented', async () => {
    const date = await app.inject({ method: 'GET', url: '/core/v1/business-date' });
    assert.equal(date.statusCode, 200);
    documented.check('/core/v1/business-date', 'get', 200, date.json());
    assert.deepEqual(date.json(), { businessDate: '2026-03-02' });
    const advanced = await post('/core/v1/business-date/advance', { to: '2026-04-02' });
    assert.equal(advanced.statusCode, 200, advanced.body);
    documented.check('/core/v1/business-date/advance', 'post', 200, advanced.json());
    assert.equal(advanced.json().from, '2026-03-02');
    assert.equal(advanced.json().daysClosed.length, 23);
    const again = await post('/core/v1/business-date/advance', { to: '2026-04-02' });
    assert.deepEqual(again.json(), { from: '2026-04-02', to: '2026-04-02', daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 });
    const events = await app.inject({ method: 'GET', url: '/core/v1/events?after=0&limit=1000' });
    assert.equal(events.statusCode, 200);
    documented.check('/core/v1/events', 'get', 200, events.json());
    const sequences = events.json().events.map((event: { sequence: number }) => event.sequence);
    assert.ok(sequences.length >= 1, 'the demo facility\'s installment due 2026-03-31 is overdue');
    assert.deepEqual([...sequences].sort((a: number, b: number) => a - b), sequences);
    const last = sequences.at(-1);
    assert.deepEqual((await app.inject({ method: 'GET', url: `/core/v1/events?after=${last}` })).json(), { events: [] });
  });

  test('an advance backwards → 409 BUSINESS_DATE_BACKWARDS with both dates; a date that is none, or a bad events query → 400', async () => {
    const backwards = await post('/core/v1/business-date/advance', { to: '2026-04-01' });
    assert.equal(backwards.statusCode, 409);
    documented.check('/core/v1/business-date/advance', 'post', 409, backwards.json());
    assert.equal(backwards.json().error, 'BUSINESS_DATE_BACKWARDS');
    assert.equal(backwards.json().businessDate, '2026-04-02');
    assert.equal(backwards.json().requested, '2026-04-01');
    for (const payload of [{ to: '2026-02-30' }, { to: '2026-4-1' }, {}, { to: 20260501 }]) {
      const response = await post('/core/v1/business-date/advance', payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(response.json().error, 'BAD_REQUEST');
    }
    for (const query of ['after=-1', 'after=x', 'limit=0', 'limit=1001']) {
      assert.equal((await app.inject({ method: 'GET', url: `/core/v1/events?${query}` })).statusCode, 400, query);
    }
  });
});

describe('core server readiness needs a writable database (issue 24) [postgres]', { skip: postgres?.skip }, () => {
  test('GET /health/ready → 503 while every new session is read-only (default_transaction_read_only), 200 again once it takes writes', async () => {
    const created = await postgres!.create();
    const databaseName = new URL(created.url).pathname.slice(1);
    const opened = await openReferenceCore({ db: created.url, dataFile: demoDataFile, businessDate: undefined }, silent);
    const app = await buildCoreServer({ core: opened.core, logger: silent, version: 'test' });
    const ready = async () => (await app.inject({ method: 'GET', url: '/health/ready' })).statusCode;
    try {
      assert.equal(await ready(), 200);
      // Every new session is read-only, and the pool's sessions are cut so that it makes new ones.
      await adminQuery(`alter database ${databaseName} set default_transaction_read_only = on`);
      await adminQuery('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
      assert.equal(await waitFor('not ready', async () => ((await ready()) === 503 ? 503 : undefined)), 503, 'a read-only database answers select 1, but the core cannot execute anything on it');
      await adminQuery(`alter database ${databaseName} reset default_transaction_read_only`);
      assert.equal(await waitFor('ready again', async () => ((await ready()) === 200 ? 200 : undefined)), 200);
    } finally {
      await app.close();
      await opened.store.close();
      await adminQuery(`alter database ${databaseName} reset default_transaction_read_only`).catch(() => {});
      await created.drop();
    }
  });
});

describe('core server over a failing port', () => {
  const failing: CoreBankingPort = {
    constituteTermDeposit: async () => {
      throw new Error('secret internal detail: disk on fire');
    },
    findTermDepositConstitution: async () => {
      throw new Error('secret internal detail');
    },
    executeLoanInstallment: async () => {
      throw new Error('secret internal detail');
    },
    findLoanInstallmentExecution: async () => ({ status: 'NotFound' }),
    fenceOperation: async () => {
      throw new Error('secret internal detail');
    },
    retrieveTermDeposit: async () => undefined,
    userStatus: async () => undefined,
    workstationStatus: async () => undefined,
    ping: async () => {
      throw new Error('store unreachable');
    },
    businessDate: async () => {
      throw new Error('secret internal detail');
    },
    advanceBusinessDate: async () => {
      throw new Error('secret internal detail: end of day failed');
    },
    eventsAfter: async () => {
      throw new Error('secret internal detail');
    },
  };
  let app: FastifyInstance;
  before(async () => {
    app = await buildCoreServer({ core: failing, logger: silent, version: 'test' });
  });
  after(async () => {
    await app.close();
  });

  test('an internal failure → 500 INTERNAL_ERROR, its cause only in the log', async () => {
    const response = await app.inject({ method: 'POST', url: termDepositPath(randomUUID()), headers: { 'content-type': 'application/json' }, payload: JSON.stringify(depositCommand()) });
    assert.equal(response.statusCode, 500);
    assert.equal(response.json().error, 'INTERNAL_ERROR');
    assert.equal(response.body.includes('secret'), false);
    assert.equal((await app.inject({ method: 'GET', url: termDepositPath(randomUUID()) })).statusCode, 500);
  });

  test('a failing end of day → 500 INTERNAL_ERROR, its cause only in the log; the business date and the events too', async () => {
    const response = await app.inject({ method: 'POST', url: '/core/v1/business-date/advance', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ to: '2026-03-10' }) });
    assert.equal(response.statusCode, 500);
    assert.equal(response.json().error, 'INTERNAL_ERROR');
    assert.equal(response.body.includes('secret'), false);
    assert.equal((await app.inject({ method: 'GET', url: '/core/v1/business-date' })).statusCode, 500);
    assert.equal((await app.inject({ method: 'GET', url: '/core/v1/events?after=0' })).statusCode, 500);
  });

  test('GET /health/ready → 503 {status: unavailable} when the core does not answer', async () => {
    const response = await app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(response.statusCode, 503);
    assert.deepEqual(response.json(), { status: 'unavailable' });
  });
});
