/** A command the protocol's schema lets through but its rules refuse: the core server answers 400 BAD_REQUEST (docs/core-protocol.md, "Errors"). */
import { currencyExponent } from '../core/currencies.js';

export class BadCommand extends Error {}

/** An active ISO 4217 currency, or BadCommand. */
export function checkCurrency(currency: string): void {
  if (currencyExponent(currency) === undefined) throw new BadCommand(`${currency} is not an active ISO 4217 currency`);
}
