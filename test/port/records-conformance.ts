/**
 * The reference core's read side over the demo data (src/core/port.ts CoreRecords; docs/core-port.md),
 * embedded and through the protocol: exactly the demo data's customers, directory, accounts (the
 * bank's own negative balances included) and facility, in order and paged. The read side's and
 * the load side's rules for any core are the conformance kit's (src/conformance/records-rules.ts,
 * run by conformance.ts): an operation showing in the records, the balanced ledger, loading
 * again, a refused document.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { hasDataLoad, hasRecords, type CoreBankingPort, type CoreDataLoad, type CoreRecords } from '../../src/core/port.js';

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
  });
}
