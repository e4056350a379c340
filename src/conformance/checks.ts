/**
 * The kit's assertions: each failure is a RuleFailure whose message says what the rule expected
 * and what the core answered, in the port's words (outcomes, refusal names and codes, amounts in
 * the currency's units).
 */
import { errorCode, errorNameOf, type BusinessRefusal, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import type { CoreLookup, CoreOutcome, LoanInstallmentResult, TermDeposit } from '../core/port.js';
import { formatMinor } from '../core/money.js';
import { RuleFailure } from './conformance-errors.js';
import { describeValue } from './exchange-log.js';
import { printableLine } from './printable.js';

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new RuleFailure(message);
}

/** A catalogue entry as the protocol names it: `insufficientFundsSource (TD-422-002)`, in its own family when it has one. */
export function refusalName(entry: ErrorEntry, family: Family): string {
  let name: string;
  try {
    name = errorNameOf(entry);
  } catch {
    name = entry.reason;
  }
  return `${name} (${errorCode(entry, entry.family === 'both' ? family : entry.family)})`;
}

/** An outcome or lookup in a line. */
export function describeOutcome(outcome: CoreOutcome<unknown> | CoreLookup<unknown>, family: Family): string {
  if (outcome.status === 'Executed') return `Executed ${shorten(describeValue(outcome.result), 400)}`;
  if (outcome.status === 'Rejected') return `Rejected ${refusalName(outcome.refusal.entry, family)}: ${printableLine(outcome.refusal.message)}`;
  return 'NotFound';
}

export function executed<T>(outcome: CoreOutcome<T> | CoreLookup<T>, family: Family, what: string): T {
  if (outcome.status !== 'Executed') throw new RuleFailure(`${what}: expected Executed, got ${describeOutcome(outcome, family)}`);
  return outcome.result;
}

export function rejectedWith(outcome: CoreOutcome<unknown> | CoreLookup<unknown>, entry: ErrorEntry, family: Family, what: string): BusinessRefusal {
  if (outcome.status !== 'Rejected' || outcome.refusal.entry !== entry) {
    throw new RuleFailure(`${what}: expected Rejected ${refusalName(entry, family)}, got ${describeOutcome(outcome, family)}`);
  }
  check(typeof outcome.refusal.message === 'string' && outcome.refusal.message.length > 0, `${what}: the refusal ${refusalName(entry, family)} says no reason (an empty message)`);
  return outcome.refusal;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Equal as the port defines them (the values' JSON, bigints included); two records that differ are shown field by field. */
export function same(actual: unknown, expected: unknown, what: string): void {
  const [a, b] = [describeValue(actual), describeValue(expected)];
  if (a === b) return;
  if (isRecord(actual) && isRecord(expected)) {
    const fields = [...new Set([...Object.keys(expected), ...Object.keys(actual)])].filter((field) => describeValue(actual[field]) !== describeValue(expected[field]));
    throw new RuleFailure(`${what}: ${fields.map((field) => `${field} ${shorten(describeValue(actual[field]), 200)}, expected ${shorten(describeValue(expected[field]), 200)}`).join('; ')}`);
  }
  throw new RuleFailure(`${what}: expected ${shorten(b, 600)}, got ${shorten(a, 600)}`);
}

export function money(minor: bigint, currency: string): string {
  return `${formatMinor(minor, currency)} ${currency}`;
}

function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

const depositFields: Array<keyof TermDeposit> = [
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

/** A term deposit as the port defines it: an implementation may carry more, which is no part of the contract. */
export function contractOf(deposit: TermDeposit | undefined): Record<string, unknown> | undefined {
  return deposit && Object.fromEntries(depositFields.map((field) => [field, deposit[field]]));
}

const executionFields: Array<keyof LoanInstallmentResult> = [
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

/** A loan installment result as the port defines it. */
export function executionOf(result: LoanInstallmentResult | undefined): Record<string, unknown> | undefined {
  return result && Object.fromEntries(executionFields.map((field) => [field, result[field]]));
}
