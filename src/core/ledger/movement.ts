/**
 * Double-entry movements as values, and the ledger's own rules: a movement balances per
 * currency, has no zero line, and only some kinds of account may go below zero.
 */
export interface PostingLine {
  accountNumber: string;
  /** Signed: a credit is positive, a debit negative. */
  amountMinor: bigint;
  currency: string;
}

export interface Movement {
  id: string;
  /** The operation reference that made it (at most once per reference). */
  reference: string;
  kind: string;
  description: string | null;
  businessDate: string;
  lines: PostingLine[];
}

/** The bank's own accounts (equity, income, tax payable). */
export const internalAccountKind = 'internal';
/** A loan facility's account: its balance is the customer's debt, negative until repaid. */
export const loanAccountKind = 'loan';
/** A customer's current or savings account. */
export const customerAccountKind = 'customer';
/** A term deposit contract's account. */
export const termDepositAccountKind = 'term_deposit';

/** Only the bank's own accounts and loan accounts may go below zero; a customer's never does. */
export const negativeBalanceKinds: readonly string[] = [internalAccountKind, loanAccountKind];

export function mayGoNegative(kind: string): boolean {
  return negativeBalanceKinds.includes(kind);
}

/** A broken invariant of the ledger: never an answer to a client, always a loud failure. */
export class LedgerInvariantError extends Error {
  override name = 'LedgerInvariantError';
}

/** Asserts what every movement must be before it is written (TigerBeetle: assert, don't hope). */
export function assertBalanced(movement: Movement): void {
  if (movement.lines.length < 2) throw new LedgerInvariantError(`movement ${movement.id} has fewer than two postings`);
  const totals = new Map<string, bigint>();
  for (const line of movement.lines) {
    if (line.amountMinor === 0n) throw new LedgerInvariantError(`movement ${movement.id} has a zero posting`);
    totals.set(line.currency, (totals.get(line.currency) ?? 0n) + line.amountMinor);
  }
  for (const [currency, total] of totals) {
    if (total !== 0n) throw new LedgerInvariantError(`movement ${movement.id} does not balance in ${currency}: ${total}`);
  }
}

/** One account paying several lines is one line of their sum; zero lines are dropped. */
export function mergeSameAccount(lines: readonly PostingLine[]): PostingLine[] {
  const merged = new Map<string, PostingLine>();
  for (const line of lines) {
    const existing = merged.get(line.accountNumber);
    merged.set(line.accountNumber, existing ? { ...existing, amountMinor: existing.amountMinor + line.amountMinor } : { ...line });
  }
  return [...merged.values()].filter((line) => line.amountMinor !== 0n);
}

/** Whether an account can take this signed amount: the rule the ledger's guarded update repeats. */
export function canPost(account: { kind: string; balanceMinor: bigint }, amountMinor: bigint): boolean {
  return amountMinor >= 0n || mayGoNegative(account.kind) || account.balanceMinor + amountMinor >= 0n;
}
