/**
 * The conformance suite of the port's read side for operators and its load side for sandbox data
 * (src/core/port.ts CoreRecords, CoreDataLoad; docs/core-port.md): what the console, the operator
 * API and toolkit, `coregate check` and the sandbox loader rely on, run against the embedded
 * reference core and against the HTTP adapter in front of a core server. Only domain values cross
 * the port: balances and postings as bigint minor units, ordered and paged lists.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CoreDataRefused, hasDataLoad, hasRecords, type CoreBankingPort, type CoreDataLoad, type CoreRecords } from '../../src/core/port.js';
import { deposit } from './conformance.js';

export interface RecordsUnderTest {
  port: CoreBankingPort;
  close(): Promise<void>;
}

const everything = { limit: 500, offset: 0 };

export function describeCoreRecordsConformance(name: string, setup: () => Promise<RecordsUnderTest>, options: { skip?: string | undefined } = {}): void {
  describe(`CoreRecords and CoreDataLoad conformance: ${name}`, { skip: options.skip }, () => {
    let subject: RecordsUnderTest | undefined;
    let core: CoreBankingPort & CoreRecords & CoreDataLoad;
    before(async () => {
      subject = await setup();
      const port = subject.port;
      assert.ok(hasRecords(port) && hasDataLoad(port), 'the core serves the read and load sides');
      core = port as CoreBankingPort & CoreRecords & CoreDataLoad;
    });
    after(async () => subject?.close());

    test('customers: in reference order with their customer accounts counted, paged with more', async () => {
      const all = await core.listCustomers(everything);
      assert.deepEqual(all, {
        items: [
          { customerReference: 'C0001', name: 'Acme Exports Ltd', status: 'Active', accounts: 4 },
          { customerReference: 'C0002', name: 'Blocked Trading SA', status: 'Blocked', accounts: 1 },
        ],
        more: false,
      });
      const first = await core.listCustomers({ limit: 1, offset: 0 });
      assert.deepEqual(first.items.map((customer) => customer.customerReference), ['C0001']);
      assert.equal(first.more, true);
      const second = await core.listCustomers({ limit: 1, offset: 1 });
      assert.deepEqual(second.items.map((customer) => customer.customerReference), ['C0002']);
      assert.equal(second.more, false);
    });

    test('directory: technical users by login and workstations by id, each with its status, paged with more', async () => {
      assert.deepEqual(await core.listUsers(everything), {
        items: [
          { login: 'former-clerk', status: 'Disabled' },
          { login: 'jdoe', status: 'Active' },
          { login: 'svc-treasury', status: 'Active' },
        ],
        more: false,
      });
      const first = await core.listUsers({ limit: 2, offset: 0 });
      assert.deepEqual(first, { items: [{ login: 'former-clerk', status: 'Disabled' }, { login: 'jdoe', status: 'Active' }], more: true });
      assert.deepEqual(await core.listUsers({ limit: 2, offset: 2 }), { items: [{ login: 'svc-treasury', status: 'Active' }], more: false });
      assert.deepEqual(await core.listWorkstations(everything), {
        items: [
          { id: 'WS-BRANCH-07', status: 'Active' },
          { id: 'WS-RETIRED-02', status: 'Disabled' },
          { id: 'WS-TREASURY-01', status: 'Active' },
        ],
        more: false,
      });
      assert.deepEqual(await core.listWorkstations({ limit: 1, offset: 1 }), { items: [{ id: 'WS-RETIRED-02', status: 'Disabled' }], more: true });
    });

    test('accounts: customer accounts by number with exact balances in minor units; by customer; the bank\'s own by kind; an unknown one is undefined', async () => {
      const accounts = await core.listAccounts({}, everything);
      assert.deepEqual(
        accounts.items.map((account) => [account.accountNumber, account.customerReference, account.currency, account.balanceMinor, account.status, account.kind]),
        [
          ['1000000001', 'C0001', 'USD', 25_000_000n, 'Active', 'customer'],
          ['1000000002', 'C0001', 'USD', 150_000n, 'Active', 'customer'],
          ['1000000003', 'C0001', 'EUR', 9_000_000n, 'Active', 'customer'],
          ['1000000004', 'C0001', 'USD', 500_000n, 'Blocked', 'customer'],
          ['2000000001', 'C0002', 'USD', 8_000_000n, 'Active', 'customer'],
        ],
      );
      assert.deepEqual((await core.listAccounts({ customerReference: 'C0002' }, everything)).items.map((account) => account.accountNumber), ['2000000001']);
      const page = await core.listAccounts({}, { limit: 2, offset: 2 });
      assert.deepEqual(page.items.map((account) => account.accountNumber), ['1000000003', '1000000004']);
      assert.equal(page.more, true);
      const equity = (await core.listAccounts({ kind: 'internal' }, everything)).items.find((account) => account.accountNumber === 'EQUITY-USD');
      // The bank's side of the USD opening balances (33 650 000) and of the facility's three installments (6 000 000).
      assert.equal(equity?.balanceMinor, -(25_000_000n + 150_000n + 500_000n + 8_000_000n) + 6_000_000n, 'a negative balance crosses the port exactly');
      assert.equal((await core.findAccount('1000000001'))?.balanceMinor, 25_000_000n);
      assert.equal(await core.findAccount('9999999999'), undefined);
      assert.equal(await core.listPostings('9999999999', everything), undefined);
    });

    test('an operation shows in the records: the source account\'s postings newest first with the balance after each, the contract listed, its reference posted', async () => {
      const reference = randomUUID();
      const outcome = await core.constituteTermDeposit(reference, deposit({ principalMinor: 123_456n }));
      assert.equal(outcome.status, 'Executed');
      const contract = outcome.status === 'Executed' ? outcome.result : undefined;
      assert.ok(contract);
      assert.equal((await core.findAccount('1000000001'))?.balanceMinor, 25_000_000n - 123_456n);
      const postings = await core.listPostings('1000000001', everything);
      assert.ok(postings);
      const [newest, opening] = postings.items;
      assert.equal(newest?.reference, reference);
      assert.equal(newest?.amountMinor, -123_456n);
      assert.equal(newest?.balanceAfterMinor, 25_000_000n - 123_456n);
      assert.equal(opening?.amountMinor, 25_000_000n);
      assert.equal(opening?.balanceAfterMinor, 25_000_000n, 'the balance after the opening posting');
      assert.equal(postings.more, false);
      const paged = await core.listPostings('1000000001', { limit: 1, offset: 1 });
      assert.deepEqual(paged, { items: [opening], more: false }, 'a page further down keeps the running balance exact');

      const listed = await core.listTermDeposits({ contractNumber: contract.contractNumber }, everything);
      assert.equal(listed.items.length, 1);
      assert.equal(listed.items[0]?.principalMinor, 123_456n);
      assert.equal(listed.items[0]?.expectedInterestMinor, contract.expectedInterestMinor);
      assert.equal(listed.items[0]?.operationReference, reference);
      assert.match(listed.items[0]?.createdAt ?? '', /^\d{4}-\d{2}-\d{2}T/);
      assert.deepEqual((await core.listTermDeposits({ status: 'Matured' }, everything)).items, []);
      assert.deepEqual((await core.postedReferences([reference, randomUUID()])).sort(), [reference]);
    });

    test('loan facilities with their installments in minor units; a payment shows as paid and used limit', async () => {
      const before = await core.listLoanFacilities({}, everything);
      assert.equal(before.items.length, 1);
      const facility = before.items[0];
      assert.equal(facility?.loanId, '7000000001');
      assert.equal(facility?.approvedLimitMinor, 10_000_000n);
      assert.equal(facility?.executedTotalMinor, 0n);
      assert.deepEqual(facility?.installments.map((installment) => [installment.sequence, installment.dueDate, installment.amountMinor, installment.paidMinor]), [
        [1, '2026-03-31', 2_000_000n, 0n],
        [2, '2026-06-30', 2_000_000n, 0n],
        [3, '2026-09-30', 2_000_000n, 0n],
      ]);
      const paid = await core.executeLoanInstallment(randomUUID(), {
        loanId: '7000000001',
        sequence: 1,
        loanType: 'CRDE',
        parameterType: 'DocumentaryRemittance',
        maturityDate: undefined,
        amountMinor: 500_000n,
        currency: 'USD',
        paymentAccount: '1000000001',
        expenseAccount: '1000000002',
      });
      assert.equal(paid.status, 'Executed');
      const [afterPayment] = (await core.listLoanFacilities({ loanId: '7000000001' }, everything)).items;
      assert.equal(afterPayment?.installments[0]?.paidMinor, 500_000n);
      assert.equal(afterPayment?.executedTotalMinor, 500_000n);
      assert.deepEqual((await core.listLoanFacilities({ loanId: 'no-such-loan' }, everything)).items, []);
    });

    test('the ledger proves itself after operations: balanced movements, balances equal to their postings, no finding', async () => {
      const report = await core.checkLedger(100);
      assert.ok(report.movements >= 7, `the openings and the operations: ${report.movements}`);
      assert.ok(report.accounts >= 5);
      assert.deepEqual(
        { unbalanced: report.unbalancedMovements, mismatches: report.balanceMismatches, negative: report.negativeCustomerAccounts, deposits: report.termDepositMismatches },
        { unbalanced: [], mismatches: [], negative: [], deposits: [] },
      );
    });

    test('CONTRACT §9: the load side adds only what is missing, answers what it added, and never overwrites a balance', async () => {
      const document = {
        customers: [
          { customerReference: 'C0100', name: 'Loaded Ltd', status: 'Active' },
          { customerReference: 'C0001', name: 'Renamed in the file', status: 'Active' },
        ],
        accounts: [
          { accountNumber: '3000000001', customerReference: 'C0100', currency: 'USD', balance: 12.34, status: 'Active' },
          { accountNumber: '1000000001', customerReference: 'C0001', currency: 'USD', balance: 1, status: 'Active' },
        ],
      };
      const balanceBefore = (await core.findAccount('1000000001'))?.balanceMinor;
      assert.deepEqual(await core.loadData(document), { accountsAdded: 1 });
      assert.equal((await core.findAccount('3000000001'))?.balanceMinor, 1234n);
      assert.equal((await core.findAccount('1000000001'))?.balanceMinor, balanceBefore, 'an existing account keeps its balance');
      assert.deepEqual(await core.loadData(document), { accountsAdded: 0 }, 'loading again adds nothing');
      assert.equal((await core.listCustomers(everything)).items.find((customer) => customer.customerReference === 'C0001')?.name, 'Acme Exports Ltd', 'an existing customer is kept as it is');
      assert.deepEqual(await core.checkLedger(10).then((report) => report.balanceMismatches), []);
    });

    test('CONTRACT §9: a document the core refuses names the field and loads nothing; the API\'s part (realms, webhooks) is refused', async () => {
      await assert.rejects(
        core.loadData({ customers: [{ customerReference: 'C0200', status: 'Active' }], accounts: [{ accountNumber: '3000000002', customerReference: 'C0200', currency: 'XXQ', balance: 1, status: 'Active' }] }),
        (error: unknown) => {
          assert.ok(error instanceof CoreDataRefused, String(error));
          assert.match(error.field, /accounts/);
          return true;
        },
      );
      assert.equal(await core.findAccount('3000000002'), undefined);
      assert.equal((await core.listCustomers(everything)).items.some((customer) => customer.customerReference === 'C0200'), false, 'nothing of a refused document is loaded');
      await assert.rejects(core.loadData({ realms: [{ name: 'sandbox' }] }), (error: unknown) => {
        assert.ok(error instanceof CoreDataRefused, String(error));
        assert.equal(error.field, 'realms');
        assert.match(error.message, /API/);
        return true;
      });
    });
  });
}
