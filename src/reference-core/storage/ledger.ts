/**
 * The double-entry ledger's storage. A movement is a balanced set of postings in integer minor
 * units (asserted before writing); the rules decide that an account can take its line, and the
 * balance update repeats the check in its WHERE clause, so that a rule decided on stale facts is
 * a loud LedgerInvariantError, never a negative customer balance.
 */
import {
  assertBalanced,
  internalAccountKind,
  LedgerInvariantError,
  mayGoNegative,
  negativeBalanceKinds,
  type Movement,
} from '../../core/ledger/movement.js';
import type { Insertable } from 'kysely';
import { type CoreDb, preparedInsert, preparedQuery } from './core-db.js';
import { toBigInt } from '../../store/bigint.js';
import type { MovementTable, PostingTable } from './core-schema.js';
import { insertAccountIfMissing } from './banking.js';


/** The bank's own accounts (equity, income, tax payable) are created on first use. */
export async function ensureInternalAccount(db: CoreDb, accountNumber: string, currency: string, createdAt: string): Promise<void> {
  await insertAccountIfMissing(db, { accountNumber, customerReference: null, currency, status: 'Active', kind: internalAccountKind }, createdAt);
}

/** A credit: the balance grows. */
const creditAccount = preparedQuery((db, amountMinor: bigint, accountNumber: string, currency: string) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ balance_minor: eb('balance_minor', '+', amountMinor) }))
    .where('account_number', '=', accountNumber)
    .where('currency', '=', currency),
);

/** A debit: only an account that may go negative, or one that stays at or above zero. */
const debitAccount = preparedQuery((db, amountMinor: bigint, accountNumber: string, currency: string, sameAmountMinor: bigint) =>
  db
    .updateTable('accounts')
    .set((eb) => ({ balance_minor: eb('balance_minor', '+', amountMinor) }))
    .where('account_number', '=', accountNumber)
    .where('currency', '=', currency)
    .where((eb) => eb.or([eb('kind', 'in', [...negativeBalanceKinds]), eb(eb('balance_minor', '+', sameAmountMinor), '>=', 0n)])),
);

const movementInsert = preparedInsert<Insertable<MovementTable>>(['id', 'reference', 'kind', 'description', 'business_date', 'created_at'], (db, rows) =>
  db.insertInto('movements').values(rows),
);

const postingsInsert = preparedInsert<Insertable<PostingTable>>(['movement_id', 'line', 'account_number', 'amount_minor', 'currency'], (db, rows) =>
  db.insertInto('postings').values(rows),
);

/** `createdAt`: the core's clock's time (ISO 8601); the movement's business date is its own. */
export async function postMovement(db: CoreDb, movement: Movement, createdAt: string): Promise<void> {
  assertBalanced(movement);
  // Row locks are taken in account-number order so that concurrent movements never deadlock.
  // Every statement is started at once, in that order (on PostgreSQL one round trip); the
  // balance guards are checked when they answer, and a tripped one rolls the unit of work back.
  const byAccount = [...movement.lines].sort((a, b) => (a.accountNumber < b.accountNumber ? -1 : a.accountNumber > b.accountNumber ? 1 : 0));
  const updates = byAccount.map((line) =>
    line.amountMinor < 0n
      ? debitAccount.execute(db, line.amountMinor, line.accountNumber, line.currency, line.amountMinor)
      : creditAccount.execute(db, line.amountMinor, line.accountNumber, line.currency),
  );
  const inserts = [
    movementInsert.execute(db, {
      id: movement.id,
      reference: movement.reference,
      kind: movement.kind,
      description: movement.description,
      business_date: movement.businessDate,
      created_at: createdAt,
    }),
    postingsInsert.executeRows(
      db,
      movement.lines.map((line, index) => ({
        movement_id: movement.id,
        line: index + 1,
        account_number: line.accountNumber,
        amount_minor: line.amountMinor,
        currency: line.currency,
      })),
    ),
  ];
  const [updated, inserted] = await Promise.all([Promise.allSettled(updates), Promise.allSettled(inserts)]);
  const insertFailure = inserted.find((result) => result.status === 'rejected');
  for (const [index, result] of updated.entries()) {
    if (result.status === 'rejected') throw result.reason;
    if ((result.value.numAffectedRows ?? 0n) > 0n) continue;
    const line = byAccount[index] as Movement['lines'][number];
    // On PostgreSQL a failed insert (a posting to no account) aborted the transaction: no more reads.
    if (insertFailure) throw new LedgerInvariantError(`posting ${line.amountMinor} to ${line.accountNumber} in ${line.currency} was refused: no such account in that currency, or a guarded account below zero`);
    const exists = await db.selectFrom('accounts').select('currency').where('account_number', '=', line.accountNumber).executeTakeFirst();
    if (!exists || exists.currency !== line.currency) {
      throw new LedgerInvariantError(`posting to ${line.accountNumber} in ${line.currency}: no such account in that currency`);
    }
    throw new LedgerInvariantError(`posting ${line.amountMinor} to ${line.accountNumber} would take a guarded account below zero`);
  }
  if (insertFailure) throw insertFailure.reason;
}

export interface LedgerCheck {
  movements: number;
  accounts: number;
  unbalancedMovements: Array<{ movementId: string; currency: string; totalMinor: string }>;
  balanceMismatches: Array<{ accountNumber: string; storedMinor: string; postedMinor: string }>;
  negativeCustomerAccounts: Array<{ accountNumber: string; balanceMinor: string }>;
}

/** Proves the ledger: every movement sums to zero per currency, every balance equals its postings. */
export async function checkLedger(db: CoreDb): Promise<LedgerCheck> {
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
      .filter((row) => !mayGoNegative(row.kind) && toBigInt(row.balance_minor) < 0n)
      .map((row) => ({ accountNumber: row.account_number, balanceMinor: toBigInt(row.balance_minor).toString() })),
  };
}

/** Which of the references have a movement in the ledger (the core keeps the reference with its postings). */
export async function findPostedReferences(db: CoreDb, references: readonly string[]): Promise<Set<string>> {
  if (references.length === 0) return new Set();
  const rows = await db.selectFrom('movements').select('reference').where('reference', 'in', [...references]).execute();
  return new Set(rows.map((row) => row.reference));
}
