/**
 * coregate on an in-process core (docs/core-port.md, "An in-process core"): starts the service on
 * the in-memory core of in-memory-core.ts, then makes a term deposit through the business API as a
 * client application would (a token, then POST /v1/term-deposits/initiate), reads it back, and
 * stops. Run it from the repository's directory:
 *
 *   npx tsx examples/in-process-core/start.ts
 *
 * The API's own records (realm, client, operations, audit) go to a new SQLite file in a temporary
 * directory, removed at the end; the core's records are the in-memory core's alone: the reference
 * core is neither migrated nor built. In a project of your own, import from 'coregate'.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, startCoregate } from '../../src/index.js';
import { InMemoryCore } from './in-memory-core.js';

const core = new InMemoryCore({
  businessDate: '2026-03-02',
  holidays: ['2026-04-03', '2026-05-01'],
  customers: { C0001: { status: 'Active' } },
  accounts: {
    '1000000001': { customerReference: 'C0001', currency: 'USD', balanceMinor: 25_000_000n },
    '1000000002': { customerReference: 'C0001', currency: 'USD', balanceMinor: 150_000n },
  },
  products: { 'TDFIX/TD30-365': { currencies: ['USD', 'EUR'], dayCount: 'ACT/360', minDays: 30, maxDays: 365 } },
  users: { teller: 'Active' },
  workstations: { 'WS-01': 'Active' },
});

// The API's part of a data file only (a realm and its client): the core's records are the core's.
const client = { clientId: 'teller-app', secret: 'teller-app-secret-change-me-0123456789abcdef' };
const dir = mkdtempSync(join(tmpdir(), 'coregate-in-process-core-'));
const dataFile = join(dir, 'api-data.json');
writeFileSync(
  dataFile,
  JSON.stringify({
    realms: [{ name: 'bank', clients: [{ ...client, scopes: ['termDeposit:initiate', 'termDeposit:retrieve'], technicalUser: 'teller', defaultWorkstation: 'WS-01' }] }],
  }),
);

const config = resolveConfig({ port: '0', host: '127.0.0.1', db: `sqlite:${join(dir, 'api.db')}`, data: dataFile, auditSpool: join(dir, 'audit-spool'), logLevel: 'error' }, {});
const coregate = await startCoregate(config, { core });
try {
  const token = await fetch(`${coregate.url}/realms/bank/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }),
  });
  const { access_token: accessToken } = (await token.json()) as { access_token: string };
  const headers = { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' };

  const initiated = await fetch(`${coregate.url}/v1/term-deposits/initiate`, {
    method: 'POST',
    headers: { ...headers, 'x-correlation-id': randomUUID() },
    body: JSON.stringify({
      customerReference: 'C0001',
      termDepositProduct: { productCode: 'TDFIX', componentCode: 'TD30-365' },
      principalAmount: { amountValue: 10000, amountCurrency: { currencycode: 'USD' }, amountType: 'Principal' },
      interestRate: { rateValue: 5.25, rateType: 'Nominal' },
      termDepositPeriod: { numberOfDays: 90 },
      valueDate: '2026-03-02',
      sourceAccount: { accountIdentification: '1000000001', accountType: 'DebitAccount' },
      interestSettlementAccount: { accountIdentification: '1000000002', accountType: 'CreditAccount' },
    }),
  });
  const deposit = (await initiated.json()) as { termDepositAccount?: string; termDepositPeriod?: { numberOfDays: number; maturityDate: string } };
  if (initiated.status !== 200 || deposit.termDepositAccount === undefined) throw new Error(`the term deposit was not made: ${initiated.status} ${JSON.stringify(deposit)}`);
  console.log(`initiate ${initiated.status} ${deposit.termDepositAccount}, maturity ${deposit.termDepositPeriod?.maturityDate} (${deposit.termDepositPeriod?.numberOfDays} days)`);

  const retrieved = await fetch(`${coregate.url}/v1/term-deposits/${deposit.termDepositAccount}/retrieve`, { headers });
  const contract = (await retrieved.json()) as { termDepositStatus: string; expectedInterestAmount: { amountValue: number; amountCurrency: { currencycode: string } } };
  const interest = contract.expectedInterestAmount;
  console.log(`retrieve ${retrieved.status} ${contract.termDepositStatus}, expected interest ${interest.amountValue} ${interest.amountCurrency.currencycode}`);
  console.log(`the core's account 1000000001: ${core.balanceOf('1000000001')} minor units`);
} finally {
  await coregate.close();
  rmSync(dir, { recursive: true, force: true });
}
