/** A client's amount and currency checked the same way by every operation (docs/api.md, "Money"). */
import { isActiveCurrency } from './currencies.js';
import { errorCatalogue as E, BusinessRefusal } from './error-catalogue.js';
import { formatMinor, minorUnitsLimit, parseAmount, significantDigitsMax } from './money.js';

/**
 * Minor units of a requested amount, or a 400 refusal naming the fields. `value` is the amount's
 * decimal text as the client wrote it (docs/api.md, "Money"), which the messages quote.
 */
export function requestedAmountMinor(value: string, currency: string, fields: { amount: string; currency: string }): bigint {
  if (!isActiveCurrency(currency)) {
    throw new BusinessRefusal(E.invalidCurrency, `${fields.currency} "${currency}" is not an active ISO 4217 currency code`);
  }
  const parsed = parseAmount(value, currency);
  if (parsed.ok) return parsed.minor;
  if (parsed.problem === 'not_positive') throw new BusinessRefusal(E.invalidAmount, `${fields.amount} must be greater than 0, got ${value}`);
  if (parsed.problem === 'too_large') {
    throw new BusinessRefusal(E.invalidAmountPrecision, `${fields.amount} ${value} is too large: at most ${formatMinor(minorUnitsLimit - 1n, currency)} ${currency}`);
  }
  throw new BusinessRefusal(
    E.invalidAmountPrecision,
    `${fields.amount} ${value} has more decimals than ${currency} allows or more than ${significantDigitsMax} significant digits`,
  );
}
