/**
 * The bench's data file: two realms (RS256 and ES256) whose client holds every scope (and a
 * client of the RS256 realm with the loan scope only, for the 403), a
 * technical user and workstation that are active, 200 customers each with a funded source
 * account, a second account (interest settlement, loan expenses) and a loan facility with one
 * large installment that partial executions can pay for the whole run.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const customersCount = 200;
export const client = { clientId: 'bench-app', secret: 'bench-app-secret-0123456789abcdef0123456789abcdef' };
/** A client of the RS256 realm whose token lacks the retrieve scope: the 403 scenario's. */
export const narrowClient = { clientId: 'bench-narrow', secret: 'bench-narrow-secret-0123456789abcdef0123456789abcdef' };
export const realms = { rs256: 'bench', es256: 'bench-es' } as const;
export const businessDate = '2026-03-02';

export interface BenchCustomer {
  customerReference: string;
  sourceAccount: string;
  secondAccount: string;
  loanId: string;
}

export function benchCustomers(): BenchCustomer[] {
  return Array.from({ length: customersCount }, (_, i) => {
    const n = String(i + 1).padStart(4, '0');
    return { customerReference: `B${n}`, sourceAccount: `31000${n}`, secondAccount: `32000${n}`, loanId: `77000${n}` };
  });
}

/** `extraRealms`: realms the caller adds (bench/fapi.ts's, with its generated key). */
export function writeBenchData(dir: string, extraRealms: readonly Record<string, unknown>[] = []): string {
  const customers = benchCustomers();
  const realmClient = {
    ...client,
    grants: ['client_credentials'],
    scopes: ['termDeposit:initiate', 'termDeposit:retrieve', 'merchandisingLoan:execute'],
    technicalUser: 'svc-bench',
    defaultWorkstation: 'WS-BENCH-01',
  };
  const data = {
    businessDate,
    calendar: { weekend: ['SATURDAY', 'SUNDAY'], holidays: [] },
    realms: [
      // Tokens outlive the whole run: the API scenarios reuse one token.
      { name: realms.rs256, accessTokenLifespanSeconds: 3600, signatureAlgorithm: 'RS256', clients: [realmClient, { ...realmClient, ...narrowClient, scopes: ['merchandisingLoan:execute'] }] },
      { name: realms.es256, accessTokenLifespanSeconds: 3600, signatureAlgorithm: 'ES256', clients: [realmClient] },
      ...extraRealms,
    ],
    users: [{ login: 'svc-bench', status: 'Active' }],
    workstations: [{ id: 'WS-BENCH-01', status: 'Active' }],
    customers: customers.map((c) => ({ customerReference: c.customerReference, name: `Bench customer ${c.customerReference}`, status: 'Active' })),
    accounts: customers.flatMap((c) => [
      { accountNumber: c.sourceAccount, customerReference: c.customerReference, currency: 'USD', balance: 1_000_000_000, status: 'Active' },
      { accountNumber: c.secondAccount, customerReference: c.customerReference, currency: 'USD', balance: 1_000_000_000, status: 'Active' },
    ]),
    termDepositProducts: [
      { productCode: 'TDFIX', componentCode: 'TD30-365', active: true, currencies: ['USD'], minAmount: 1000, maxAmount: 5_000_000, minDays: 30, maxDays: 365, dayCount: 'ACT/360' },
    ],
    merchandisingLoans: customers.map((c) => ({
      merchandisingLoanId: c.loanId,
      customerReference: c.customerReference,
      merchandisingLoanType: 'CRDE',
      merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
      currency: 'USD',
      approvedLimit: 1_000_000_000,
      status: 'Active',
      finalMaturityDate: '2026-12-31',
      charges: { fixedFee: 1, commissionRate: 0.001, minimumCommission: 1, taxRate: 0.16 },
      installments: [{ sequence: 1, dueDate: '2026-12-31', amount: 900_000_000 }],
    })),
  };
  const file = join(dir, 'bench-data.json');
  writeFileSync(file, JSON.stringify(data, null, 2));
  return file;
}

export function depositBody(customer: BenchCustomer, source = customer.sourceAccount): string {
  return JSON.stringify({
    customerReference: customer.customerReference,
    termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
    principalAmount: { amountValue: 1000, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
    interestRate: { rateValue: 5.25, rateType: 'Nominal' },
    termDepositPeriod: { numberOfDays: 90 },
    valueDate: businessDate,
    sourceAccount: { accountIdentification: source, accountType: 'DebitAccount' },
    interestSettlementAccount: { accountIdentification: customer.secondAccount, accountType: 'CreditAccount' },
  });
}

export function loanBody(customer: BenchCustomer): string {
  return JSON.stringify({
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: { loanInstallmentSequence: 1, loanAmount: { amountValue: 10, amountCurrency: { currencyCode: 'USD' } } },
    accountReferences: [
      { accountIdentification: { accountIdentificationType: 'PaymentAccount', identifierValue: customer.sourceAccount } },
      { accountIdentification: { accountIdentificationType: 'ExpenseAccount', identifierValue: customer.secondAccount } },
    ],
  });
}

export function loanPath(customer: BenchCustomer): string {
  return `/v1/merchandising-loan/${customer.loanId}/repayment-schedules/1/execute`;
}
