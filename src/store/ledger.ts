/**
 * The double-entry ledger. A movement is a balanced set of postings in integer minor units;
 * customer accounts can never go below zero (the check is part of the balance update itself, so
 * concurrent debits cannot both pass it); internal accounts of the bank may.
 */
import type { Queryable } from './realms.js';
import { toBigInt } from './bigint.js';
import { insertAccountIfMissing } from './banking.js';

export interface PostingLine {
  accountNumber: string;
  /** Signed: a credit is positive, a debit negative. */
  amountMinor: bigint;
  currency: string;
}

export interface Movement {
  id: string;
  reference: string;
  kind: string;
  description: string | null;
  businessDate: string;
  lines: PostingLine[];
}

/** A customer account would go below zero. An expected failure: the caller maps it to its rule. */
export class InsufficientFunds extends Error {
  constructor(readonly accountNumber: string) {
    super(`insufficient funds in account ${accountNumber}`);
    this.name = 'InsufficientFunds';
  }
}

/** A broken invariant: never an answer to a client, always a loud failure. */
export class LedgerInvariantError extends Error {
  override name = 'LedgerInvariantError';
}

export const internalAccountKind = 'internal';
/** A loan facility's account: its balance is the customer's debt, negative until repaid. */
export const loanAccountKind = 'loan';
/** Kinds whose balance may go below zero: the bank's own accounts and loan accounts. */
const mayGoNegative = [internalAccountKind, loanAccountKind];

/** The bank's own accounts (equity, income, tax payable) are created on first use. */
export async function ensureInternalAccount(db: Queryable, accountNumber: string, currency: string): Promise<void> {
  await insertAccountIfMissing(db, { accountNumber, customerReference: null, currency, status: 'Active', kind: internalAccountKind });
}

export async function postMovement(db: Queryable, movement: Movement): Promise<void> {
  assertBalanced(movement);
  // Row locks are taken in account-number order so that concurrent movements never deadlock.
  const byAccount = [...movement.lines].sort((a, b) => (a.accountNumber < b.accountNumber ? -1 : a.accountNumber > b.accountNumber ? 1 : 0));
  for (const line of byAccount) {
    const update = db
      .updateTable('accounts')
      .set((eb) => ({ balance_minor: eb('balance_minor', '+', line.amountMinor) }))
      .where('account_number', '=', line.accountNumber)
      .where('currency', '=', line.currency);
    const guarded =
      line.amountMinor < 0n
        ? update.where((eb) => eb.or([eb('kind', 'in', mayGoNegative), eb(eb('balance_minor', '+', line.amountMinor), '>=', 0n)]))
        : update;
    const result = await guarded.executeTakeFirst();
    if (result.numUpdatedRows === 0n) {
      const exists = await db.selectFrom('accounts').select('currency').where('account_number', '=', line.accountNumber).executeTakeFirst();
      if (!exists || exists.currency !== line.currency) {
        throw new LedgerInvariantError(`posting to ${line.accountNumber} in ${line.currency}: no such account in that currency`);
      }
      throw new InsufficientFunds(line.accountNumber);
    }
  }
  const createdAt = new Date().toISOString();
  await db
    .insertInto('movements')
    .values({
      id: movement.id,
      reference: movement.reference,
      kind: movement.kind,
      description: movement.description,
      business_date: movement.businessDate,
      created_at: createdAt,
    })
    .execute();
  await db
    .insertInto('postings')
    .values(
      movement.lines.map((line, index) => ({
        movement_id: movement.id,
        line: index + 1,
        account_number: line.accountNumber,
        amount_minor: line.amountMinor,
        currency: line.currency,
      })),
    )
    .execute();
}

function assertBalanced(movement: Movement): void {
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

export interface LedgerCheck {
  movements: number;
  accounts: number;
  unbalancedMovements: Array<{ movementId: string; currency: string; totalMinor: string }>;
  balanceMismatches: Array<{ accountNumber: string; storedMinor: string; postedMinor: string }>;
  negativeCustomerAccounts: Array<{ accountNumber: string; balanceMinor: string }>;
}

/** Proves the ledger: every movement sums to zero per currency, every balance equals its postings. */
export async function checkLedger(db: Queryable): Promise<LedgerCheck> {
  const movementTotals = await db
    .selectFrom('postings')
    .select(['movement_id', 'currency'])
    .select((eb) => eb.fn.sum<string | number>('amount_minor').as('total'))
    .groupBy(['movement_id', 'currency'])
    .execute();
  const postedByAccount = await db
    .selectFrom('postings')
    .select('account_number')
    .select((eb) => eb.fn.sum<string | number>('amount_minor').as('total'))
    .groupBy('account_number')
    .execute();
  const accounts = await db.selectFrom('accounts').select(['account_number', 'balance_minor', 'kind']).execute();
  const posted = new Map(postedByAccount.map((row) => [row.account_number, toBigInt(row.total)]));
  const movementIds = new Set(movementTotals.map((row) => row.movement_id));
  return {
    movements: movementIds.size,
    accounts: accounts.length,
    unbalancedMovements: movementTotals
      .filter((row) => toBigInt(row.total) !== 0n)
      .map((row) => ({ movementId: row.movement_id, currency: row.currency, totalMinor: String(row.total) })),
    balanceMismatches: accounts
      .filter((row) => toBigInt(row.balance_minor) !== (posted.get(row.account_number) ?? 0n))
      .map((row) => ({
        accountNumber: row.account_number,
        storedMinor: toBigInt(row.balance_minor).toString(),
        postedMinor: (posted.get(row.account_number) ?? 0n).toString(),
      })),
    negativeCustomerAccounts: accounts
      .filter((row) => !mayGoNegative.includes(row.kind) && toBigInt(row.balance_minor) < 0n)
      .map((row) => ({ accountNumber: row.account_number, balanceMinor: toBigInt(row.balance_minor).toString() })),
  };
}
