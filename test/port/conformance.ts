/**
 * The CoreBankingPort conformance suite (docs/core-port.md): the tests every implementation of
 * the port must pass, as Level's abstract-level suite is for stores and Kysely's dialect suite for
 * dialects. coregate runs it against the embedded reference core and against the HTTP adapter in
 * front of a core server, on each store; a bank runs it against its own adapter:
 *
 *   describeCorePortConformance('my bank core', async () => ({ port: new MyCore(...), close: ... }));
 *
 * `setup` gives a fresh port over the suite's data (conformanceDataFile: demo/sandbox.json's
 * customers, accounts, products and loan facility, business date 2026-03-02), and optionally a
 * `balanceOf` probe that reads an account's balance in minor units from the core's own records,
 * so that the suite can prove that money moved exactly once. Only domain values cross the port:
 * bigint minor units, YYYY-MM-DD dates, catalogue refusals, the reference as idempotency key.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { errorCatalogue as E, type ErrorEntry } from '../../src/core/error-catalogue.js';
import type { LoanInstallmentExecution } from '../../src/core/loans/execution-request.js';
import { BusinessDateBackwards, type CoreBankingPort, type CoreLookup, type CoreOutcome, type LoanInstallmentResult, type TermDeposit } from '../../src/core/port.js';
import type { TermDepositInitiation } from '../../src/core/term-deposits/initiation.js';
import { repoRoot } from '../helpers/repo-root.js';
import { join } from 'node:path';

/** The data the suite's expectations are written for. */
export const conformanceDataFile = join(repoRoot, 'demo/sandbox.json');

export interface PortUnderTest {
  port: CoreBankingPort;
  /** An account's balance in minor units, from the core's own records. */
  balanceOf?: (accountNumber: string) => Promise<bigint>;
  close(): Promise<void>;
}

export interface ConformanceOptions {
  /** A reason to skip the whole suite (e.g. its store is not reachable). */
  skip?: string | undefined;
}

// The suite's data (conformanceDataFile).
const customer = 'C0001';
const source = '1000000001';
const interest = '1000000002';
const facility = '7000000001';
const expense = '1000000002';

/** A valid initiation of the demo data's customer; the HTTP adapter's tests share it. */
export function deposit(terms: Partial<TermDepositInitiation> = {}): TermDepositInitiation {
  return {
    customerReference: customer,
    productCode: 'TDFIX',
    componentCode: 'TD30-365',
    principalMinor: 100_000n,
    currency: 'USD',
    ratePercent: '5.25',
    numberOfDays: 90,
    maturityDate: undefined,
    valueDate: '2026-03-02',
    sourceAccount: source,
    interestAccount: interest,
    description: 'conformance suite',
    ...terms,
  };
}

function installment(terms: Partial<LoanInstallmentExecution> = {}): LoanInstallmentExecution {
  return {
    loanId: facility,
    sequence: 1,
    loanType: 'CRDE',
    parameterType: 'DocumentaryRemittance',
    maturityDate: undefined,
    amountMinor: undefined,
    currency: undefined,
    paymentAccount: source,
    expenseAccount: expense,
    ...terms,
  };
}

const usd = (amountMinor: bigint): Pick<LoanInstallmentExecution, 'amountMinor' | 'currency'> => ({ amountMinor, currency: 'USD' });

/**
 * A term deposit as the port defines it (port.ts TermDeposit): an implementation may carry more
 * properties (the reference core's stored rows do), which are no part of the contract.
 */
function contractOf(deposit: TermDeposit | undefined): Record<string, unknown> | undefined {
  if (!deposit) return undefined;
  const fields: Array<keyof TermDeposit> = [
    'contractNumber',
    'customerReference',
    'productCode',
    'componentCode',
    'principalMinor',
    'currency',
    'ratePercent',
    'dayCount',
    'valueDate',
    'maturityDate',
    'numberOfDays',
    'sourceAccount',
    'interestAccount',
    'description',
    'operationReference',
    'status',
    'expectedInterestMinor',
  ];
  return Object.fromEntries(fields.map((field) => [field, deposit[field]]));
}

/** A loan installment result as the port defines it (port.ts LoanInstallmentResult). */
function executionOf(result: LoanInstallmentResult | undefined): Record<string, unknown> | undefined {
  if (!result) return undefined;
  const fields: Array<keyof LoanInstallmentResult> = [
    'operationId',
    'executionReference',
    'loanId',
    'sequence',
    'amountMinor',
    'commissionMinor',
    'feeMinor',
    'taxMinor',
    'currency',
    'paymentAccount',
    'expenseAccount',
    'facilityStatus',
    'executedAt',
  ];
  return Object.fromEntries(fields.map((field) => [field, result[field]]));
}

function executed<T>(outcome: CoreOutcome<T> | CoreLookup<T>): T {
  assert.equal(outcome.status, 'Executed', JSON.stringify(outcome, (_key, value: unknown) => (typeof value === 'bigint' ? `${value}n` : value)));
  return (outcome as { result: T }).result;
}

function assertRejected(outcome: CoreOutcome<unknown> | CoreLookup<unknown>, entry: ErrorEntry): { message: string } {
  assert.equal(outcome.status, 'Rejected', `expected a ${entry.reason} refusal, got ${outcome.status}`);
  const { refusal } = outcome as { refusal: { entry: ErrorEntry; message: string } };
  assert.deepEqual(refusal.entry, entry);
  assert.equal(typeof refusal.message, 'string');
  assert.ok(refusal.message.length > 0, 'a refusal says why');
  return refusal;
}

export function describeCorePortConformance(name: string, setup: () => Promise<PortUnderTest>, options: ConformanceOptions = {}): void {
  describe(`CoreBankingPort conformance: ${name}`, { skip: options.skip }, () => {
    let subject: PortUnderTest | undefined;
    before(async () => {
      subject = await setup();
    });
    after(async () => {
      await subject?.close();
    });
    const port = (): CoreBankingPort => {
      if (!subject) throw new Error('the port under test was not set up');
      return subject.port;
    };
    /** The balance changes `work` causes, per account; empty when the port has no balance probe. */
    async function movements(accounts: string[], work: () => Promise<void>): Promise<Map<string, bigint> | undefined> {
      const balanceOf = subject?.balanceOf;
      if (!balanceOf) {
        await work();
        return undefined;
      }
      const before = await Promise.all(accounts.map((account) => balanceOf(account)));
      await work();
      const afterwards = await Promise.all(accounts.map((account) => balanceOf(account)));
      return new Map(accounts.map((account, index) => [account, (afterwards[index] ?? 0n) - (before[index] ?? 0n)]));
    }

    // ----- Term deposits -----

    test('term deposit: a valid constitution is Executed with the contract; the maturity (value date + days) rolls forward to a business day; the expected interest is principal × rate/100 × days / basis, half-up', async () => {
      const reference = randomUUID();
      let result: TermDeposit | undefined;
      const moved = await movements([source], async () => {
        result = executed(await port().constituteTermDeposit(reference, deposit({ numberOfDays: 90 })));
      });
      assert.ok(result);
      assert.equal(typeof result.contractNumber, 'string');
      assert.ok(result.contractNumber.length > 0);
      assert.equal(result.operationReference, reference);
      assert.equal(result.customerReference, customer);
      assert.equal(result.principalMinor, 100_000n);
      assert.equal(result.currency, 'USD');
      assert.equal(result.ratePercent, '5.25');
      assert.equal(result.dayCount, 'ACT/360');
      assert.equal(result.valueDate, '2026-03-02');
      // 2026-03-02 + 90 days is Sunday 2026-05-31: the maturity rolls to Monday 2026-06-01, 91 days.
      assert.equal(result.maturityDate, '2026-06-01');
      assert.equal(result.numberOfDays, 91);
      assert.equal(result.sourceAccount, source);
      assert.equal(result.interestAccount, interest);
      // 1000.00 × 5.25 % × 91 / 360 = 13.2708… → 13.27
      assert.equal(result.expectedInterestMinor, 1327n);
      if (moved) assert.equal(moved.get(source), -100_000n, 'the source account is debited with the principal');
    });

    test('term deposit: a maturity that falls on a holiday rolls past it and the weekend (Good Friday 2026-04-03 → Monday 2026-04-06)', async () => {
      const result = executed(await port().constituteTermDeposit(randomUUID(), deposit({ numberOfDays: 32 })));
      assert.equal(result.maturityDate, '2026-04-06');
      assert.equal(result.numberOfDays, 35);
      // 1000.00 × 5.25 % × 35 / 360 = 5.1041… → 5.10
      assert.equal(result.expectedInterestMinor, 510n);
    });

    test('term deposit: an explicit maturity date on a business day is kept, and numberOfDays counts the days to it', async () => {
      const result = executed(await port().constituteTermDeposit(randomUUID(), deposit({ numberOfDays: undefined, maturityDate: '2026-04-30' })));
      assert.equal(result.maturityDate, '2026-04-30');
      assert.equal(result.numberOfDays, 59);
    });

    test('term deposit: at most once — the same reference again answers the original result without a second movement', async () => {
      const reference = randomUUID();
      let first: TermDeposit | undefined;
      let second: TermDeposit | undefined;
      const moved = await movements([source], async () => {
        first = executed(await port().constituteTermDeposit(reference, deposit({ principalMinor: 123_456n })));
        // The repeat carries another amount: the reference, not the body, identifies the operation.
        second = executed(await port().constituteTermDeposit(reference, deposit({ principalMinor: 999_999n })));
      });
      assert.deepEqual(contractOf(second), contractOf(first));
      if (moved) assert.equal(moved.get(source), -123_456n, 'debited once');
    });

    test('term deposit: at most once under a race — two concurrent calls with one reference execute once and both answer the same contract', async () => {
      const reference = randomUUID();
      let answers: Array<CoreOutcome<TermDeposit>> = [];
      const moved = await movements([source], async () => {
        answers = await Promise.all([
          port().constituteTermDeposit(reference, deposit({ principalMinor: 222_222n })),
          port().constituteTermDeposit(reference, deposit({ principalMinor: 222_222n })),
        ]);
      });
      const [first, second] = answers.map((answer) => executed(answer));
      assert.deepEqual(contractOf(second), contractOf(first));
      if (moved) assert.equal(moved.get(source), -222_222n, 'debited once');
    });

    test('term deposit: insufficient funds is Rejected with insufficientFundsSource (TD-422-002) and moves nothing; the same reference again answers the same refusal', async () => {
      const reference = randomUUID();
      let refusals: Array<{ message: string }> = [];
      const moved = await movements([source], async () => {
        // 300 000.00 USD: within the product's limits, more than the account holds.
        const first = assertRejected(await port().constituteTermDeposit(reference, deposit({ principalMinor: 30_000_000n })), E.insufficientFundsSource);
        const again = assertRejected(await port().constituteTermDeposit(reference, deposit({ principalMinor: 30_000_000n })), E.insufficientFundsSource);
        refusals = [first, again];
      });
      assert.equal(refusals[1]?.message, refusals[0]?.message);
      if (moved) assert.equal(moved.get(source), 0n);
    });

    test('term deposit: a refusal is final for its reference — the same reference with a valid command still answers the refusal and moves nothing', async () => {
      const reference = randomUUID();
      const moved = await movements([source], async () => {
        assertRejected(await port().constituteTermDeposit(reference, deposit({ customerReference: 'C9999' })), E.customerNotFound);
        assertRejected(await port().constituteTermDeposit(reference, deposit()), E.customerNotFound);
      });
      if (moved) assert.equal(moved.get(source), 0n);
    });

    const depositRefusals: Array<[string, Partial<TermDepositInitiation>, ErrorEntry]> = [
      ['an unknown customer → customerNotFound (TD-404-001)', { customerReference: 'C9999' }, E.customerNotFound],
      ['an unknown source account → sourceAccountNotFound (TD-404-002)', { sourceAccount: '1999999999' }, E.sourceAccountNotFound],
      ['an unknown interest settlement account → interestAccountNotFound (TD-404-003)', { interestAccount: '1999999998' }, E.interestAccountNotFound],
      ['a blocked customer → customerBlocked (TD-422-001)', { customerReference: 'C0002', sourceAccount: '2000000001', interestAccount: '2000000001' }, E.customerBlocked],
      ['an inactive product → productNotAvailable (TD-422-003)', { productCode: 'TDOLD', componentCode: 'TD90' }, E.productNotAvailable],
      ['a principal below the product\'s minimum → amountOutsideProductLimits (TD-422-004)', { principalMinor: 50_000n }, E.amountOutsideProductLimits],
      ['a term shorter than the product\'s minimum → termOutsideProductLimits (TD-422-005)', { numberOfDays: 10 }, E.termOutsideProductLimits],
      ['a blocked source account → accountNotActive (TD-422-006)', { sourceAccount: '1000000004' }, E.accountNotActive],
      ['another customer\'s source account → accountNotCustomers (TD-422-007)', { sourceAccount: '2000000001' }, E.accountNotCustomers],
      ['a EUR principal from a USD account → currencyMismatchSource (TD-422-008)', { currency: 'EUR' }, E.currencyMismatchSource],
      ['a currency the product does not offer → currencyNotOffered (TD-422-009)', { currency: 'GBP' }, E.currencyNotOffered],
      ['a value date on a Saturday → valueDateNotBusinessDay (TD-422-010)', { valueDate: '2026-03-07' }, E.valueDateNotBusinessDay],
      ['a value date before the business date → valueDateBeforeBusinessDate (TD-422-011)', { valueDate: '2026-02-27' }, E.valueDateBeforeBusinessDate],
      ['an explicit maturity on a holiday → maturityNotBusinessDay (TD-422-012)', { numberOfDays: undefined, maturityDate: '2026-05-01' }, E.maturityNotBusinessDay],
    ];
    for (const [rule, terms, entry] of depositRefusals) {
      test(`term deposit: ${rule}, and nothing moves`, async () => {
        const moved = await movements([source], async () => {
          assertRejected(await port().constituteTermDeposit(randomUUID(), deposit(terms)), entry);
        });
        if (moved) assert.equal(moved.get(source), 0n);
      });
    }

    test('term deposit: findTermDepositConstitution answers Executed with the result, Rejected with the refusal, NotFound for a reference never executed', async () => {
      const done = randomUUID();
      const result = executed(await port().constituteTermDeposit(done, deposit()));
      assert.deepEqual(contractOf(executed(await port().findTermDepositConstitution(done))), contractOf(result));

      const refused = randomUUID();
      const refusal = assertRejected(await port().constituteTermDeposit(refused, deposit({ principalMinor: 30_000_000n })), E.insufficientFundsSource);
      assert.equal(assertRejected(await port().findTermDepositConstitution(refused), E.insufficientFundsSource).message, refusal.message);

      assert.deepEqual(await port().findTermDepositConstitution(randomUUID()), { status: 'NotFound' });
    });

    test('term deposit: a lookup never executes — a reference looked up first and executed after is executed once', async () => {
      const reference = randomUUID();
      assert.deepEqual(await port().findTermDepositConstitution(reference), { status: 'NotFound' });
      const moved = await movements([source], async () => {
        executed(await port().constituteTermDeposit(reference, deposit({ principalMinor: 100_100n })));
      });
      if (moved) assert.equal(moved.get(source), -100_100n);
    });

    test('fencing: a fenced reference never executes — the constitution is Rejected NOT_EXECUTED (TD-502-002), moves nothing, and the lookup says so', async () => {
      const reference = randomUUID();
      await port().fenceOperation(reference);
      const moved = await movements([source], async () => {
        assertRejected(await port().constituteTermDeposit(reference, deposit({ principalMinor: 100_200n })), E.notExecuted);
      });
      if (moved) assert.equal(moved.get(source), 0n);
      assertRejected(await port().findTermDepositConstitution(reference), E.notExecuted);
      assertRejected(await port().findLoanInstallmentExecution(reference), E.notExecuted);
    });

    test('fencing: a reference that executed stays Executed when fenced afterwards, and fencing twice is harmless', async () => {
      const reference = randomUUID();
      const result = executed(await port().constituteTermDeposit(reference, deposit({ principalMinor: 100_300n })));
      await port().fenceOperation(reference);
      await port().fenceOperation(reference);
      assert.deepEqual(contractOf(executed(await port().findTermDepositConstitution(reference))), contractOf(result));
    });

    test('term deposit: retrieveTermDeposit answers the contract with its expected interest; undefined for an unknown contract number', async () => {
      const result = executed(await port().constituteTermDeposit(randomUUID(), deposit({ principalMinor: 1_000_000n, numberOfDays: 181 })));
      const retrieved = await port().retrieveTermDeposit(result.contractNumber);
      assert.deepEqual(contractOf(retrieved), contractOf(result));
      assert.equal(await port().retrieveTermDeposit('TD-NO-SUCH-CONTRACT'), undefined);
    });

    // ----- Loan installments -----

    test('loan: a partial payment is PartiallyExecuted; charges to the cent: commission = max(amount × rate, minimum), fee, tax = (commission + fee) × rate, each half-up', async () => {
      const reference = randomUUID();
      let result: LoanInstallmentResult | undefined;
      const moved = await movements([source, expense], async () => {
        result = executed(await port().executeLoanInstallment(reference, installment({ sequence: 1, ...usd(1_234_567n) })));
      });
      assert.ok(result);
      assert.equal(result.executionReference, reference);
      assert.equal(result.loanId, facility);
      assert.equal(result.sequence, 1);
      assert.equal(result.currency, 'USD');
      assert.equal(result.amountMinor, 1_234_567n);
      // 12 345.67 × 0.0015 = 18.5185… → 18.52 (above the 10.00 minimum); fee 25.00; (18.52 + 25.00) × 0.16 = 6.9632 → 6.96
      assert.equal(result.commissionMinor, 1852n);
      assert.equal(result.feeMinor, 2500n);
      assert.equal(result.taxMinor, 696n);
      assert.equal(result.facilityStatus, 'PartiallyExecuted');
      assert.equal(result.paymentAccount, source);
      assert.equal(result.expenseAccount, expense);
      assert.equal(typeof result.operationId, 'string');
      assert.ok(result.operationId.length > 0);
      assert.ok(!Number.isNaN(Date.parse(result.executedAt)), `executedAt ${result.executedAt} is a time`);
      if (moved) {
        assert.equal(moved.get(source), -1_234_567n, 'the payment account pays the amount');
        assert.equal(moved.get(expense), -(1852n + 2500n + 696n), 'the expense account pays the charges');
      }
    });

    test('loan: the amount omitted pays the installment\'s whole outstanding and the installment is Executed; paying it again is installmentPaid (ML-409-010)', async () => {
      const reference = randomUUID();
      let result: LoanInstallmentResult | undefined;
      const moved = await movements([source, expense], async () => {
        result = executed(await port().executeLoanInstallment(reference, installment({ sequence: 1 })));
      });
      assert.ok(result);
      // 20 000.00 − 12 345.67 paid by the test before.
      assert.equal(result.amountMinor, 765_433n);
      // 7 654.33 × 0.0015 = 11.4814… → 11.48; (11.48 + 25.00) × 0.16 = 5.8368 → 5.84
      assert.equal(result.commissionMinor, 1148n);
      assert.equal(result.taxMinor, 584n);
      assert.equal(result.facilityStatus, 'Executed');
      if (moved) {
        assert.equal(moved.get(source), -765_433n);
        assert.equal(moved.get(expense), -(1148n + 2500n + 584n));
      }
      assertRejected(await port().executeLoanInstallment(randomUUID(), installment({ sequence: 1, ...usd(100n) })), E.installmentPaid);
    });

    test('loan: at most once — the same reference again answers the original result without a second movement; under a race too; the minimum commission applies', async () => {
      const reference = randomUUID();
      let answers: Array<CoreOutcome<LoanInstallmentResult>> = [];
      const moved = await movements([source, expense], async () => {
        answers = await Promise.all([
          port().executeLoanInstallment(reference, installment({ sequence: 2, ...usd(100_000n) })),
          port().executeLoanInstallment(reference, installment({ sequence: 2, ...usd(100_000n) })),
        ]);
        answers.push(await port().executeLoanInstallment(reference, installment({ sequence: 2, ...usd(100_000n) })));
      });
      const [first, ...others] = answers.map((answer) => executed(answer));
      for (const other of others) assert.deepEqual(executionOf(other), executionOf(first));
      // 1 000.00 × 0.0015 = 1.50, below the 10.00 minimum; (10.00 + 25.00) × 0.16 = 5.60
      assert.equal(first?.commissionMinor, 1000n);
      assert.equal(first?.taxMinor, 560n);
      if (moved) {
        assert.equal(moved.get(source), -100_000n, 'paid once');
        assert.equal(moved.get(expense), -(1000n + 2500n + 560n), 'charged once');
      }
    });

    const loanRefusals: Array<[string, Partial<LoanInstallmentExecution>, ErrorEntry]> = [
      ['an unknown facility → facilityNotFound (ML-404-001)', { loanId: '7999999999', ...usd(100_000n) }, E.facilityNotFound],
      ['an unknown installment → installmentNotFound (ML-404-002)', { sequence: 99, ...usd(100_000n) }, E.installmentNotFound],
      ['an unknown payment account → paymentAccountNotFound (ML-404-003)', { sequence: 3, paymentAccount: '1999999999', ...usd(100_000n) }, E.paymentAccountNotFound],
      ['a reserved parameter type → parameterTypeNotSupported (ML-422-003)', { sequence: 3, parameterType: 'LetterOfCredit', ...usd(100_000n) }, E.parameterTypeNotSupported],
      ['another loan type → loanTypeMismatch (ML-422-001)', { sequence: 3, loanType: 'XXXX', ...usd(100_000n) }, E.loanTypeMismatch],
      ['an amount in another currency → loanCurrencyMismatch (ML-422-004)', { sequence: 3, amountMinor: 100_000n, currency: 'EUR' }, E.loanCurrencyMismatch],
      ['an amount above the outstanding → amountAboveOutstanding (ML-422-005)', { sequence: 3, ...usd(2_000_001n) }, E.amountAboveOutstanding],
      ['a payment account that cannot pay → insufficientFundsPayment (ML-422-007)', { sequence: 3, paymentAccount: '1000000002', ...usd(2_000_000n) }, E.insufficientFundsPayment],
      ['another customer\'s payment account → loanAccountNotCustomers (ML-422-010)', { sequence: 3, paymentAccount: '2000000001', ...usd(100_000n) }, E.loanAccountNotCustomers],
    ];
    for (const [rule, terms, entry] of loanRefusals) {
      test(`loan: ${rule}, and nothing moves`, async () => {
        const moved = await movements([source, expense], async () => {
          assertRejected(await port().executeLoanInstallment(randomUUID(), installment(terms)), entry);
        });
        if (moved) {
          assert.equal(moved.get(source), 0n);
          assert.equal(moved.get(expense), 0n);
        }
      });
    }

    test('loan: a refusal is final for its reference — the same reference again answers the same refusal, even with a valid command', async () => {
      const reference = randomUUID();
      const first = assertRejected(await port().executeLoanInstallment(reference, installment({ sequence: 3, ...usd(2_000_001n) })), E.amountAboveOutstanding);
      const again = assertRejected(await port().executeLoanInstallment(reference, installment({ sequence: 3, ...usd(100_000n) })), E.amountAboveOutstanding);
      assert.equal(again.message, first.message);
    });

    test('loan: findLoanInstallmentExecution answers Executed with the result, Rejected with the refusal, NotFound for a reference never executed', async () => {
      const done = randomUUID();
      const result = executed(await port().executeLoanInstallment(done, installment({ sequence: 3, ...usd(50_000n) })));
      assert.deepEqual(executionOf(executed(await port().findLoanInstallmentExecution(done))), executionOf(result));

      const refused = randomUUID();
      const refusal = assertRejected(await port().executeLoanInstallment(refused, installment({ sequence: 99, ...usd(100n) })), E.installmentNotFound);
      assert.equal(assertRejected(await port().findLoanInstallmentExecution(refused), E.installmentNotFound).message, refusal.message);

      assert.deepEqual(await port().findLoanInstallmentExecution(randomUUID()), { status: 'NotFound' });
    });

    // ----- Directory and readiness -----

    test('directory: userStatus answers Active or Disabled for known users, undefined for an unknown login', async () => {
      assert.equal(await port().userStatus('svc-treasury'), 'Active');
      assert.equal(await port().userStatus('former-clerk'), 'Disabled');
      assert.equal(await port().userStatus('no-such-user'), undefined);
    });

    test('directory: workstationStatus answers Active or Disabled for known workstations, undefined for an unknown id', async () => {
      assert.equal(await port().workstationStatus('WS-TREASURY-01'), 'Active');
      assert.equal(await port().workstationStatus('WS-RETIRED-02'), 'Disabled');
      assert.equal(await port().workstationStatus('WS-NO-SUCH'), undefined);
    });

    test('ping resolves while the core answers', async () => {
      await port().ping();
    });

    // ----- Business days (CONTRACT §12). Last: they move the suite's business date. -----

    test('CONTRACT §12: businessDate answers the data\'s business date; eventsAfter answers no event before any end of day', async () => {
      assert.equal(await port().businessDate(), '2026-03-02');
      assert.deepEqual(await port().eventsAfter(0, 100), []);
    });

    test('CONTRACT §12: advancing past a maturity date repays the principal to the source account and the interest, as the retrieve computes it, to the interest account; the contract is Matured; one termDeposit.matured event', async () => {
      const reference = randomUUID();
      // 2026-03-02 + 30 days: Wednesday 2026-04-01.
      const contract = executed(await port().constituteTermDeposit(reference, deposit({ numberOfDays: 30, principalMinor: 250_000n })));
      assert.equal(contract.maturityDate, '2026-04-01');
      const expectedInterest = contract.expectedInterestMinor;
      assert.equal(expectedInterest, 1094n, '2500.00 × 5.25 % × 30 / 360 = 10.9375 → 10.94');
      let report: Awaited<ReturnType<CoreBankingPort['advanceBusinessDate']>> | undefined;
      const moved = await movements([source, interest], async () => {
        report = await port().advanceBusinessDate('2026-04-02');
      });
      assert.ok(report);
      assert.equal(report.from, '2026-03-02');
      assert.equal(report.to, '2026-04-02');
      assert.equal(report.daysClosed[0], '2026-03-02', 'the day left is the first closed');
      assert.equal(report.daysClosed.at(-1), '2026-04-01', 'the new business date is open: its end of day has not run');
      assert.equal(report.daysClosed.includes('2026-03-07'), false, 'a Saturday has no end of day');
      assert.equal(report.maturedDeposits, 1, 'only the contract maturing by 2026-04-01');
      assert.equal(await port().businessDate(), '2026-04-02');
      if (moved) {
        assert.equal(moved.get(source), 250_000n, 'the principal back to the source account');
        assert.equal(moved.get(interest), expectedInterest, 'the interest to the cent');
      }
      const retrieved = await port().retrieveTermDeposit(contract.contractNumber);
      assert.equal(retrieved?.status, 'Matured');
      assert.equal(retrieved?.expectedInterestMinor, expectedInterest);
      const events = (await port().eventsAfter(0, 1000)).filter((event) => event.type === 'termDeposit.matured');
      assert.equal(events.length, 1);
      const [event] = events;
      assert.ok(event);
      assert.equal(event.operationReference, reference);
      assert.equal(event.businessDate, '2026-04-01');
      assert.equal(event.data.contractNumber, contract.contractNumber);
      assert.deepEqual(event.data.interest, { amount: '10.94', currency: 'USD' });
      assert.deepEqual(event.data.principal, { amount: '2500.00', currency: 'USD' });
      assert.match(event.id, /^[0-9a-f-]{36}$/);
      const again = await port().eventsAfter(0, 1000);
      assert.deepEqual(again.find((e) => e.id === event.id), event, 'an event read twice is the same event (stable id and sequence)');
      assert.deepEqual(await port().eventsAfter(again.at(-1)?.sequence ?? 0, 10), [], 'nothing after the last sequence');
    });

    test('CONTRACT §12: advancing to the current date is a no-op report, and moves nothing', async () => {
      const moved = await movements([source, interest], async () => {
        assert.deepEqual(await port().advanceBusinessDate('2026-04-02'), { from: '2026-04-02', to: '2026-04-02', daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 });
      });
      if (moved) assert.deepEqual([...moved.values()], [0n, 0n]);
    });

    test('CONTRACT §12: a maturity rolled over Good Friday to Monday 2026-04-06 is repaid by the end of day of 2026-04-06, not before: two steps', async () => {
      const first = await port().advanceBusinessDate('2026-04-06');
      assert.deepEqual(first.daysClosed, ['2026-04-02'], 'Good Friday and the weekend have no end of day');
      const rolled = (await port().eventsAfter(0, 1000)).filter((event) => event.type === 'termDeposit.matured' && event.businessDate === '2026-04-06');
      assert.equal(rolled.length, 0, 'the new business date is open: 2026-04-06 has not closed');
      const second = await port().advanceBusinessDate('2026-04-07');
      assert.deepEqual(second.daysClosed, ['2026-04-06']);
      assert.ok(second.maturedDeposits >= 1, 'the deposit constituted for 32 days matures');
      const events = (await port().eventsAfter(0, 1000)).filter((event) => event.type === 'termDeposit.matured' && event.businessDate === '2026-04-06');
      assert.equal(events.length, second.maturedDeposits);
      for (const event of events) assert.equal((await port().retrieveTermDeposit(String(event.data.contractNumber)))?.status, 'Matured');
    });

    test('CONTRACT §12: the business date never goes backwards (BusinessDateBackwards naming both dates) and a value date before the new date is refused', async () => {
      await assert.rejects(port().advanceBusinessDate('2026-04-01'), (error: unknown) => {
        assert.ok(error instanceof BusinessDateBackwards, String(error));
        assert.match(error.message, /2026-04-07/);
        assert.match(error.message, /2026-04-01/);
        return true;
      });
      assert.equal(await port().businessDate(), '2026-04-07');
      assertRejected(await port().constituteTermDeposit(randomUUID(), deposit({ valueDate: '2026-04-06' })), E.valueDateBeforeBusinessDate);
      executed(await port().constituteTermDeposit(randomUUID(), deposit({ valueDate: '2026-04-07' })));
    });
  });
}
