/**
 * Query parameters of the operator API's lists. The server's schema validator does not coerce
 * types (the business API wants JSON as sent), and a query string is text: counts are checked here.
 *
 * Every list pages the same way (docs/console.md): `limit` from 1 to 500, `offset` from 0, a 400
 * that names the parameter and its bounds for anything else, and `more` in the answer when rows
 * are left after the page.
 */
import { OperatorError } from '../errors.js';

/** A count in a query string: digits only, within its bounds, its default when absent. */
export function countParameter(name: string, value: string | undefined, bounds: { defaultValue: number; minimum: number; maximum: number }): number {
  if (value === undefined) return bounds.defaultValue;
  const count = /^[0-9]{1,7}$/.test(value) ? Number(value) : Number.NaN;
  if (!(count >= bounds.minimum && count <= bounds.maximum)) {
    throw new OperatorError(400, `${name} must be a whole number from ${bounds.minimum} to ${bounds.maximum}, got "${value.slice(0, 32)}"`);
  }
  return count;
}

/** The JSON schema of a count in a query string (the handler converts it with countParameter). */
export const countSchema = { type: 'string', maxLength: 16 } as const;

/** Rows one page answers at most, whatever the list (the store's and the core's lists stop there too). */
export const pageRowsMax = 500;
/** How deep a page may start: an offset is rows the database reads and throws away. */
export const pageOffsetMax = 100_000;
/**
 * What a list answers without `limit`: the records the console shows whole (customers, accounts,
 * deposits, facilities, clients, webhook endpoints) a full page; the logs that only grow
 * (postings, operations, audit records, deliveries) their newest 50.
 */
export const recordsLimitDefault = pageRowsMax;
export const logLimitDefault = 50;

/** The query schema's properties of a paged list. */
export const pageQuery = { limit: countSchema, offset: countSchema } as const;

export interface PageParameters {
  limit: number;
  offset: number;
}

/** `limit` and `offset` of a list's query string, within their bounds. */
export function pageParameters(query: { limit?: string | undefined; offset?: string | undefined }, bounds: { limitDefault: number; offsetMax?: number }): PageParameters {
  return {
    limit: countParameter('limit', query.limit, { defaultValue: bounds.limitDefault, minimum: 1, maximum: pageRowsMax }),
    offset: countParameter('offset', query.offset, { defaultValue: 0, minimum: 0, maximum: bounds.offsetMax ?? pageOffsetMax }),
  };
}

/**
 * One page out of rows read with one more than the page holds (`limit + 1` from `offset`): that
 * extra row is how `more` is known without counting the table.
 */
export function pageFromOneMore<T>(rows: T[], limit: number): { items: T[]; more: boolean } {
  return { items: rows.slice(0, limit), more: rows.length > limit };
}

/** One page out of a whole list held in memory (a list its store answers in full). */
export function pageFromAll<T>(rows: T[], page: PageParameters): { items: T[]; more: boolean } {
  return pageFromOneMore(rows.slice(page.offset, page.offset + page.limit + 1), page.limit);
}
