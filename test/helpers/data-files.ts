/**
 * Sandbox data files derived from demo/sandbox.json: a test extends the demo data with the
 * accounts, facilities or realms it needs and serves the result from a temporary file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoDataFile } from './server.js';

/** A fresh parsed copy of the demo data, typed as the caller needs it. */
export function readDemoData<T = Record<string, unknown[]>>(): T {
  return JSON.parse(readFileSync(demoDataFile, 'utf8')) as T;
}

/** Creates a temporary directory, removed when the test process exits (after every suite's servers). */
export function tempDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  process.on('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes `data` as sandbox.json in a new temporary directory; answers the file's path. */
export function writeTempDataFile(data: unknown, prefix = 'coregate-data-'): string {
  const file = join(tempDirectory(prefix), 'sandbox.json');
  writeFileSync(file, JSON.stringify(data, null, 2));
  return file;
}

/** The parts of the sandbox data the tests extend. */
export interface SandboxData {
  realms: unknown[];
  accounts: Array<Record<string, unknown>>;
  merchandisingLoans: Array<Record<string, unknown>>;
  termDepositProducts: unknown[];
}

/** An active USD account of the demo customer C0001. */
export function c0001Account(accountNumber: string, balance: number): Record<string, unknown> {
  return { accountNumber, customerReference: 'C0001', currency: 'USD', balance, status: 'Active' };
}

/** A USD documentary-remittance facility of C0001 with the demo facility's charges; `fields` adds limit, status, installments. */
export function c0001Facility(merchandisingLoanId: string, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    merchandisingLoanId,
    customerReference: 'C0001',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityParameterType: 'DocumentaryRemittance',
    currency: 'USD',
    finalMaturityDate: '2026-12-31',
    charges: { fixedFee: 25.0, commissionRate: 0.0015, minimumCommission: 10.0, taxRate: 0.16 },
    ...fields,
  };
}
