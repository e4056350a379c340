/**
 * Query parameters of the operator API's lists. The server's schema validator does not coerce
 * types (the business API wants JSON as sent), and a query string is text: counts are checked here.
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
