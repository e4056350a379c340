/** The torture test's bank: the demo realms and clients, well-funded accounts, a long loan schedule. */
import { readDemoData, writeTempDataFile, c0001Account, c0001Facility } from '../helpers/data-files.js';

export const tortureAccounts = { source: '3000000001', interest: '3000000002', payment: '3000000003', expense: '3000000004' } as const;
export const tortureFacility = '7100000001';
/** Installments of 500.00 each: enough for any run. */
export const tortureInstallments = 2_000;

export function writeTortureDataFile(): string {
  const data = readDemoData<Record<string, unknown[]>>();
  data.accounts = [
    ...(data.accounts ?? []),
    c0001Account(tortureAccounts.source, 20_000_000),
    c0001Account(tortureAccounts.interest, 0),
    c0001Account(tortureAccounts.payment, 2_000_000),
    c0001Account(tortureAccounts.expense, 500_000),
  ];
  data.merchandisingLoans = [
    ...(data.merchandisingLoans ?? []),
    c0001Facility(tortureFacility, {
      approvedLimit: 500 * tortureInstallments,
      status: 'Active',
      installments: Array.from({ length: tortureInstallments }, (_, index) => ({ sequence: index + 1, dueDate: '2026-06-30', amount: 500 })),
    }),
  ];
  return writeTempDataFile(data, 'coregate-torture-');
}
