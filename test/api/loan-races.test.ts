/**
 * Racing real HTTP executions of merchandising loan installments, on each store (docs/loans.md,
 * "The execution": the installment's paid amount, the facility's executed total and the debits are
 * guarded, so that concurrent executions can never overpay; docs/api.md, "Correlation ids and
 * duplicates": a correlation id is consumed once). The store is read on its own connection
 * (openStore); every scenario has a store of its own; the ledger must prove after each.
 */
// @deployments remote-core two-instances
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import { toBigInt } from '../../src/store/bigint.js';
import { checkLedger } from '../../src/reference-core/storage/ledger.js';
import { c0001Account, c0001Facility, readDemoData, writeTempDataFile, type SandboxData } from '../helpers/data-files.js';
import { demoToken, testDeployment, type TestServer } from '../helpers/server.js';
import { withDb, withStore } from '../helpers/stores.js';
import { describeEachStore } from '../helpers/suite.js';
import { coreTablesOf } from '../../src/reference-core/storage/core-db.js';

/** The original's outcome a losing racer's 409 names. */
const settledOrInFlight = testDeployment === 'remote-core' ? '(?:Executed|Pending)' : 'Executed';

const raceTimeoutMs = 60_000;
const racers = 20;

/** The demo facility: installments 3 × 20 000.00, limit 100 000.00. */
const demoFacility = '7000000001';
/** Approved limit 10 000.00; 20 installments of 1 000.00. */
const limitedFacility = '7000000005';
/** Approved limit 1 000 000.00; 20 installments of 1 000.00. */
const manyInstallments = '7000000006';

/** C0001, USD 250 000.00. */
const payer = '1000000001';
/** C0001, USD 10 000.00: the expense account of the races, so that its drop is exactly the charges. */
const expenseAccount = '1000000010';
/** C0001, USD 203.00: exactly five times the charges of a 1 000.00 payment (10.00 + 25.00 + 5.60). */
const fiveChargesAccount = '1000000012';

const commissionIncome = 'INCOME-COMMISSION-USD';
const feeIncome = 'INCOME-FEE-USD';
const taxPayable = 'TAX-PAYABLE-USD';

/** Charges of any amount up to 6 666.66 (commission at its 10.00 minimum): 10.00 + 25.00 + 5.60. */
const minimumCharges = { commission: 1_000n, fee: 2_500n, tax: 560n, total: 4_060n };

function writeRaceDataFile(): string {
  const data = readDemoData<SandboxData>();
  data.accounts.push(c0001Account(expenseAccount, 10_000.0), c0001Account(fiveChargesAccount, 203.0));
  const facility = (id: string, approvedLimit: number) =>
    c0001Facility(id, {
      approvedLimit,
      status: 'Active',
      installments: Array.from({ length: racers }, (_, index) => ({ sequence: index + 1, dueDate: '2026-06-30', amount: 1_000.0 })),
    });
  data.merchandisingLoans.push(facility(limitedFacility, 10_000.0), facility(manyInstallments, 1_000_000.0));
  return writeTempDataFile(data, 'coregate-loan-races-');
}

const raceDataFile = writeRaceDataFile();

interface HttpResult {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

function loanBody(amount: number | null, expense = expenseAccount): Record<string, unknown> {
  return {
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: amount === null ? {} : { loanAmount: { amountValue: amount, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: payer } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: expense } },
    ],
  };
}

function executePath(loanId: string, sequence: number): string {
  return `/v1/merchandising-loan/${loanId}/repayment-schedules/${sequence}/execute`;
}

async function execute(server: TestServer, token: string, loanId: string, sequence: number, body: unknown, correlationId: string): Promise<HttpResult> {
  const response = await fetch(`${server.url}${executePath(loanId, sequence)}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text === '' ? undefined : JSON.parse(text) };
}

function countStatuses(responses: HttpResult[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
  return counts;
}

function assertWrappedError(response: HttpResult, status: number, codes: string[], path: string): void {
  assert.equal(response.status, status, response.text);
  assert.deepEqual(Object.keys(response.body), ['error']);
  assert.equal(response.body.error.status, status);
  assert.equal(response.body.error.path, `POST ${path}`);
  assert.ok(codes.includes(response.body.error.errordetail?.[0]?.code), `${response.body.error.errordetail?.[0]?.code} is one of ${codes.join(', ')}`);
}

interface Snapshot {
  balances: Record<string, bigint>;
  paid: Record<string, bigint>;
  amountDue: Record<string, bigint>;
  executed: Record<string, bigint>;
}

function snapshot(dbUrl: string): Promise<Snapshot> {
  return withDb(dbUrl, async (db) => {
    const accounts = await db.selectFrom('accounts').select(['account_number', 'balance_minor']).execute();
    const installments = await db.selectFrom('loan_installments').select(['loan_id', 'sequence', 'paid_minor', 'amount_minor']).execute();
    const facilities = await db.selectFrom('loan_facilities').select(['loan_id', 'executed_total_minor']).execute();
    return {
      balances: Object.fromEntries(accounts.map((row) => [row.account_number, toBigInt(row.balance_minor)])),
      paid: Object.fromEntries(installments.map((row) => [`${row.loan_id}/${Number(row.sequence)}`, toBigInt(row.paid_minor)])),
      amountDue: Object.fromEntries(installments.map((row) => [`${row.loan_id}/${Number(row.sequence)}`, toBigInt(row.amount_minor)])),
      executed: Object.fromEntries(facilities.map((row) => [row.loan_id, toBigInt(row.executed_total_minor)])),
    };
  });
}

/** The state after exactly these payments, and nothing else. */
interface Payment {
  loanId: string;
  sequence: number;
  amountMinor: bigint;
  expense: string;
  /** The minimum charges unless given. */
  charges?: typeof minimumCharges;
}

function expectedAfter(before: Snapshot, payments: Payment[]): Omit<Snapshot, 'amountDue'> {
  const balances = { ...before.balances };
  const paid = { ...before.paid };
  const executed = { ...before.executed };
  const add = (map: Record<string, bigint>, key: string, delta: bigint) => {
    map[key] = (map[key] ?? 0n) + delta;
  };
  for (const payment of payments) {
    add(balances, payer, -payment.amountMinor);
    add(balances, payment.loanId, payment.amountMinor);
    const charges = payment.charges ?? minimumCharges;
    add(balances, payment.expense, -charges.total);
    add(balances, commissionIncome, charges.commission);
    add(balances, feeIncome, charges.fee);
    add(balances, taxPayable, charges.tax);
    add(paid, `${payment.loanId}/${payment.sequence}`, payment.amountMinor);
    add(executed, payment.loanId, payment.amountMinor);
  }
  return { balances, paid, executed };
}

async function assertState(dbUrl: string, expected: Omit<Snapshot, 'amountDue'>): Promise<Snapshot> {
  const after = await snapshot(dbUrl);
  assert.deepEqual(after.balances, expected.balances, 'balances moved by exactly the succeeded amounts and charges');
  assert.deepEqual(after.paid, expected.paid, 'installments raised by exactly the succeeded amounts');
  assert.deepEqual(after.executed, expected.executed, 'facility totals raised by exactly the succeeded amounts');
  for (const [key, paid] of Object.entries(after.paid)) assert.ok(paid <= (after.amountDue[key] ?? 0n), `installment ${key} is not overpaid`);
  return after;
}

async function assertLedgerProves(dbUrl: string): Promise<void> {
  const report = await withStore(dbUrl, (store) => checkLedger(coreTablesOf(store.db)));
  assert.deepEqual(report.unbalancedMovements, [], 'every movement balances');
  assert.deepEqual(report.balanceMismatches, [], 'every balance equals its postings');
  assert.deepEqual(report.negativeCustomerAccounts, [], 'no customer account is negative');
}

/** The execution references recorded by the core for a facility, and their movements. */
async function recordedExecutions(dbUrl: string, loanId: string): Promise<{ executions: string[]; movements: string[] }> {
  return withDb(dbUrl, async (db) => {
    const executions = await db.selectFrom('loan_executions').select('execution_reference').where('loan_id', '=', loanId).execute();
    const movements = await db
      .selectFrom('movements')
      .innerJoin('postings', 'postings.movement_id', 'movements.id')
      .select('movements.reference')
      .where('movements.kind', '=', 'loan_installment_execution')
      .where('postings.account_number', '=', loanId)
      .execute();
    return { executions: executions.map((row) => row.execution_reference).sort(), movements: movements.map((row) => row.reference).sort() };
  });
}

function race(count: number, one: (index: number) => Promise<HttpResult>): Promise<HttpResult[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => one(index)));
}

describeEachStore(
  'concurrent partial payments of one installment',
  ({ server, dbUrl }) => {
    test('20 racing executions of 1500.00 on one 20000.00 installment: the sum paid never exceeds it, exactly 13 succeed (19500.00), the others 422 ML-422-005 and change nothing; the ledger proves', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      const key = `${demoFacility}/1`;
      assert.equal(before.paid[key], 0n);
      const amountDue = before.amountDue[key] ?? 0n;
      assert.equal(amountDue, 2_000_000n);
      const amountMinor = 150_000n;
      const ids = Array.from({ length: racers }, (_, index) => `race-partial-${index}-${randomUUID()}`);
      const responses = await race(racers, (index) => execute(server(), token, demoFacility, 1, loanBody(1_500), ids[index]!));

      const succeeded = responses.filter((response) => response.status === 200);
      const refused = responses.filter((response) => response.status !== 200);
      const paidMinor = BigInt(succeeded.length) * amountMinor;
      assert.ok(paidMinor <= amountDue, 'the sum paid never exceeds the installment');
      assert.equal(succeeded.length, Number(amountDue / amountMinor), 'as many succeed as fit: 13');
      assert.deepEqual(countStatuses(responses), { 200: 13, 422: 7 });
      const fullyPaid = paidMinor === amountDue;
      for (const response of succeeded) assert.equal(response.body.merchandisingLoanFacilityStatus, 'PartiallyExecuted', '500.00 always remains');
      for (const response of refused) {
        assertWrappedError(response, response.status, fullyPaid ? ['ML-422-005', 'ML-409-010'] : ['ML-422-005'], executePath(demoFacility, 1));
      }
      responses.forEach((response, index) => assert.equal(response.headers.get('x-correlation-id'), ids[index]));

      const after = await assertState(
        dbUrl(),
        expectedAfter(
          before,
          succeeded.map(() => ({ loanId: demoFacility, sequence: 1, amountMinor, expense: expenseAccount })),
        ),
      );
      assert.equal(after.paid[key], paidMinor, 'paid_minor is the sum of the succeeded executions');
      assert.equal((before.balances[payer] ?? 0n) - (after.balances[payer] ?? 0n), 13n * 150_000n, 'the payment account paid exactly 13 × 1500.00');
      assert.equal((before.balances[expenseAccount] ?? 0n) - (after.balances[expenseAccount] ?? 0n), 13n * 4_060n, 'the expense account paid exactly 13 × 40.60');
      const references = succeeded.map((response) => response.body.executionReference as string).sort();
      assert.deepEqual(await recordedExecutions(dbUrl(), demoFacility), { executions: references, movements: references }, 'one execution and one movement per success, none for a refusal');
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);

describeEachStore(
  'concurrent payments that exactly complete one installment',
  ({ server, dbUrl }) => {
    test('20 racing executions of 1000.00 on one 20000.00 installment: all succeed, and exactly the one that completes it reports Executed, the others PartiallyExecuted', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      const responses = await race(racers, (index) => execute(server(), token, demoFacility, 1, loanBody(1_000), `race-exact-${index}-${randomUUID()}`));
      assert.deepEqual(countStatuses(responses), { 200: 20 });
      await assertState(
        dbUrl(),
        expectedAfter(
          before,
          responses.map(() => ({ loanId: demoFacility, sequence: 1, amountMinor: 100_000n, expense: expenseAccount })),
        ),
      );
      await assertLedgerProves(dbUrl());
      const statuses = responses.map((response) => response.body.merchandisingLoanFacilityStatus as string);
      const stored = await withDb(dbUrl(), (db) => db.selectFrom('loan_executions').select('facility_status').where('loan_id', '=', demoFacility).execute());
      assert.deepEqual(
        { Executed: statuses.filter((s) => s === 'Executed').length, PartiallyExecuted: statuses.filter((s) => s === 'PartiallyExecuted').length },
        { Executed: 1, PartiallyExecuted: 19 },
        `Executed when the installment is fully paid, PartiallyExecuted when some remains; answered ${JSON.stringify(statuses)}`,
      );
      assert.equal(stored.filter((row) => row.facility_status === 'Executed').length, 1, 'the core records exactly one Executed execution');
    });
  },
  { data: raceDataFile },
);

describeEachStore(
  'concurrent whole-outstanding payments of one installment',
  ({ server, dbUrl }) => {
    test('20 racing executions with loanAmount omitted: exactly one pays the whole 20000.00 (Executed), 19 × 409 ML-409-010 change nothing', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      const responses = await race(racers, (index) => execute(server(), token, demoFacility, 2, loanBody(null), `race-whole-${index}-${randomUUID()}`));
      assert.deepEqual(countStatuses(responses), { 200: 1, 409: 19 });
      const winner = responses.find((response) => response.status === 200);
      assert.equal(winner?.body.merchandisingLoanFacilityStatus, 'Executed');
      for (const response of responses.filter((r) => r.status === 409)) assertWrappedError(response, 409, ['ML-409-010'], executePath(demoFacility, 2));
      // 20000.00: commission 20000.00 × 0.0015 = 30.00, fee 25.00, tax 55.00 × 0.16 = 8.80.
      const charges = { commission: 3_000n, fee: 2_500n, tax: 880n, total: 6_380n };
      await assertState(dbUrl(), expectedAfter(before, [{ loanId: demoFacility, sequence: 2, amountMinor: 2_000_000n, expense: expenseAccount, charges }]));
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);

/** The charges of docs/loans.md, "The execution", by hand: commission = max(amount × 0.0015, 10.00), fee 25.00, tax = (commission + fee) × 0.16, half-up. */
function chargesOf(amountMinor: bigint): typeof minimumCharges {
  const halfUp = (numerator: bigint, denominator: bigint) => (numerator * 2n + denominator) / (denominator * 2n);
  const proportional = halfUp(amountMinor * 15n, 10_000n);
  const commission = proportional > 1_000n ? proportional : 1_000n;
  const tax = halfUp((commission + 2_500n) * 16n, 100n);
  return { commission, fee: 2_500n, tax, total: commission + 2_500n + tax };
}

describeEachStore(
  'concurrent partial payments and one whole-outstanding payment',
  ({ server, dbUrl }) => {
    test('loanAmount omitted racing 19 payments of 100.00: it pays whatever remains (Executed) or finds the installment paid (409), never 422 "above the outstanding"; the installment ends fully paid', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      const key = `${demoFacility}/1`;
      const wholeIndex = 10;
      const responses = await race(racers, (index) =>
        execute(server(), token, demoFacility, 1, loanBody(index === wholeIndex ? null : 100), `race-rest-${index}-${randomUUID()}`),
      );
      const whole = responses[wholeIndex]!;
      assert.ok(
        whole.status === 200 || whole.status === 409,
        `loanAmount omitted → the installment's whole outstanding at execution; answered ${whole.status} ${whole.text}`,
      );
      if (whole.status === 200) assert.equal(whole.body.merchandisingLoanFacilityStatus, 'Executed', 'paying the whole outstanding completes the installment');
      else assertWrappedError(whole, 409, ['ML-409-010'], executePath(demoFacility, 1));
      responses.forEach((response, index) => {
        if (index === wholeIndex || response.status === 200) return;
        assertWrappedError(response, 409, ['ML-409-010'], executePath(demoFacility, 1));
      });

      const executions = await withDb(dbUrl(), (db) =>
        db.selectFrom('loan_executions').select(['execution_reference', 'amount_minor']).where('loan_id', '=', demoFacility).execute(),
      );
      const succeeded = responses.filter((response) => response.status === 200).map((response) => response.body.executionReference as string);
      assert.deepEqual(executions.map((row) => row.execution_reference).sort(), [...succeeded].sort(), 'one execution per success');
      const payments: Payment[] = executions.map((row) => {
        const amountMinor = toBigInt(row.amount_minor);
        return { loanId: demoFacility, sequence: 1, amountMinor, expense: expenseAccount, charges: chargesOf(amountMinor) };
      });
      const after = await assertState(dbUrl(), expectedAfter(before, payments));
      assert.equal(after.paid[key], after.amountDue[key], 'the whole-outstanding request leaves the installment fully paid');
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);

describeEachStore(
  'concurrent payments against one approved limit',
  ({ server, dbUrl }) => {
    test('20 racing executions of 1000.00 on 20 installments of a facility limited to 10000.00: exactly 10 succeed, 10 × 422 ML-422-006, the executed total ends at the limit', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      assert.equal(before.executed[limitedFacility], 0n);
      const responses = await race(racers, (index) => execute(server(), token, limitedFacility, index + 1, loanBody(1_000), `race-limit-${index}-${randomUUID()}`));
      assert.deepEqual(countStatuses(responses), { 200: 10, 422: 10 });
      const payments: Payment[] = [];
      responses.forEach((response, index) => {
        if (response.status === 200) {
          assert.equal(response.body.merchandisingLoanFacilityStatus, 'Executed', 'each pays a whole installment');
          payments.push({ loanId: limitedFacility, sequence: index + 1, amountMinor: 100_000n, expense: expenseAccount });
        } else {
          assertWrappedError(response, 422, ['ML-422-006'], executePath(limitedFacility, index + 1));
        }
      });
      const after = await assertState(dbUrl(), expectedAfter(before, payments));
      assert.equal(after.executed[limitedFacility], 1_000_000n, 'the executed total is exactly the approved limit, never above');
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);

describeEachStore(
  'concurrent payments drawing on one expense account',
  ({ server, dbUrl }) => {
    test('20 racing executions whose expense account covers exactly five charges (203.00): exactly 5 succeed, 15 × 422 ML-422-008, the account ends at 0.00', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      assert.equal(before.balances[fiveChargesAccount], 5n * minimumCharges.total);
      const responses = await race(racers, (index) =>
        execute(server(), token, manyInstallments, index + 1, loanBody(1_000, fiveChargesAccount), `race-expense-${index}-${randomUUID()}`),
      );
      assert.deepEqual(countStatuses(responses), { 200: 5, 422: 15 });
      const payments: Payment[] = [];
      responses.forEach((response, index) => {
        if (response.status === 200) payments.push({ loanId: manyInstallments, sequence: index + 1, amountMinor: 100_000n, expense: fiveChargesAccount });
        else assertWrappedError(response, 422, ['ML-422-008'], executePath(manyInstallments, index + 1));
      });
      const after = await assertState(dbUrl(), expectedAfter(before, payments));
      assert.equal(after.balances[fiveChargesAccount], 0n, 'the expense account ends at exactly 0.00');
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);

describeEachStore(
  'concurrent executions with one correlation id',
  ({ server, dbUrl }) => {
    test('20 racing executions with the same x-correlation-id: exactly one 200, 19 × 409 ML-409-001 naming it, one payment', { timeout: raceTimeoutMs }, async () => {
      const token = await demoToken(server());
      const before = await snapshot(dbUrl());
      const correlationId = `race-one-id-${randomUUID()}`;
      const responses = await race(racers, () => execute(server(), token, demoFacility, 3, loanBody(1_000), correlationId));
      assert.deepEqual(countStatuses(responses), { 200: 1, 409: 19 });
      const winner = responses.find((response) => response.status === 200);
      assert.ok(winner);
      const reference = winner.body.executionReference as string;
      for (const response of responses) assert.equal(response.headers.get('x-correlation-id'), correlationId);
      for (const response of responses.filter((r) => r.status === 409)) {
        assertWrappedError(response, 409, ['ML-409-001'], executePath(demoFacility, 3));
        // With a remote core the original is claimed (committed) before the core answers: a loser may see it Pending.
        assert.match(response.body.error.message, new RegExp(`${reference} \\(${settledOrInFlight}\\)`), 'names the original operation and its outcome');
      }
      await assertState(dbUrl(), expectedAfter(before, [{ loanId: demoFacility, sequence: 3, amountMinor: 100_000n, expense: expenseAccount }]));
      assert.deepEqual(await recordedExecutions(dbUrl(), demoFacility), { executions: [reference], movements: [reference] }, 'exactly one payment');
      const operations = await withDb(dbUrl(), (db) => db.selectFrom('operations').select('reference').where('correlation_id', '=', correlationId).execute());
      assert.deepEqual(operations.map((row) => row.reference), [reference], 'the correlation id is consumed once');
      await assertLedgerProves(dbUrl());
    });
  },
  { data: raceDataFile },
);
