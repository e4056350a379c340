/**
 * Operator access (issue 11): one-time login tokens and the console sessions they open. Both are
 * 256-bit random values shown once (the login URL, the cookie) and stored only as their SHA-256
 * hash: looking a hash up is the comparison, so no secret is ever compared byte by byte, and a
 * copy of the database opens no session. Kept in the store so that every instance shares them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { toBigInt } from './bigint.js';
import type { Store } from './connect.js';
import type { Queryable } from './queryable.js';

/** A login token opens a session within this long after it was printed. */
export const loginTokenLifeMs = 10 * 60_000;
/** A console session ends this long after login; the operator then runs `coregate console` again. */
export const sessionLifeMs = 8 * 60 * 60_000;
/** Random bytes of a token or session value (256 bits). */
const secretBytes = 32;

export type IssuedBy = 'cli' | 'banner';

export interface OperatorSession {
  /** The cookie's value: shown once, to the browser. */
  value: string;
  expiresEpochMs: number;
  issuedBy: string;
}

export function hashOperatorSecret(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

function newSecret(): string {
  return randomBytes(secretBytes).toString('base64url');
}

/** Stores a new one-time login token and answers it (the only time it exists in clear). */
export async function createLoginToken(db: Queryable, issuedBy: IssuedBy, nowEpochMs: number): Promise<{ token: string; expiresEpochMs: number }> {
  const token = newSecret();
  const expiresEpochMs = nowEpochMs + loginTokenLifeMs;
  await db
    .insertInto('operator_login_tokens')
    .values({
      token_hash: hashOperatorSecret(token),
      created_at: new Date(nowEpochMs).toISOString(),
      expires_epoch_ms: BigInt(expiresEpochMs),
      used_epoch_ms: null,
      issued_by: issuedBy,
    })
    .execute();
  return { token, expiresEpochMs };
}

/**
 * Consumes a login token and opens a session, in one transaction: the guarded update marks the
 * token used only if it was unused and unexpired, so two requests racing with one token open one
 * session. Answers undefined for an unknown, used or expired token (the caller says which it
 * cannot tell, on purpose: all three mean "run coregate console again").
 */
export async function consumeLoginToken(store: Store, token: string, nowEpochMs: number): Promise<OperatorSession | undefined> {
  if (token.length === 0 || token.length > 256) return undefined;
  const tokenHash = hashOperatorSecret(token);
  return store.transaction(async (trx) => {
    const row = await trx.selectFrom('operator_login_tokens').select('issued_by').where('token_hash', '=', tokenHash).executeTakeFirst();
    if (!row) return undefined;
    const used = await trx
      .updateTable('operator_login_tokens')
      .set({ used_epoch_ms: BigInt(nowEpochMs) })
      .where('token_hash', '=', tokenHash)
      .where('used_epoch_ms', 'is', null)
      .where('expires_epoch_ms', '>', BigInt(nowEpochMs))
      .executeTakeFirst();
    if (used.numUpdatedRows === 0n) return undefined;
    const value = newSecret();
    const expiresEpochMs = nowEpochMs + sessionLifeMs;
    await trx
      .insertInto('operator_sessions')
      .values({ session_hash: hashOperatorSecret(value), created_at: new Date(nowEpochMs).toISOString(), expires_epoch_ms: BigInt(expiresEpochMs), issued_by: row.issued_by })
      .execute();
    // Expired sessions and tokens are removed on the way: the tables stay small without a job.
    await trx.deleteFrom('operator_sessions').where('expires_epoch_ms', '<=', BigInt(nowEpochMs)).execute();
    await trx.deleteFrom('operator_login_tokens').where('expires_epoch_ms', '<=', BigInt(nowEpochMs - loginTokenLifeMs)).execute();
    return { value, expiresEpochMs, issuedBy: row.issued_by };
  });
}

/** The session a cookie value names, while it has not expired. */
export async function findOperatorSession(db: Queryable, value: string, nowEpochMs: number): Promise<{ expiresEpochMs: number; issuedBy: string } | undefined> {
  if (value.length === 0 || value.length > 256) return undefined;
  const row = await db
    .selectFrom('operator_sessions')
    .select(['expires_epoch_ms', 'issued_by'])
    .where('session_hash', '=', hashOperatorSecret(value))
    .where('expires_epoch_ms', '>', BigInt(nowEpochMs))
    .executeTakeFirst();
  return row && { expiresEpochMs: Number(toBigInt(row.expires_epoch_ms)), issuedBy: row.issued_by };
}

/** Ends a session (logout). */
export async function deleteOperatorSession(db: Queryable, value: string): Promise<void> {
  await db.deleteFrom('operator_sessions').where('session_hash', '=', hashOperatorSecret(value)).execute();
}
