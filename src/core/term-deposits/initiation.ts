/**
 * Term deposit initiation: the command the core executes, and the checks that need no stored data
 * (the 400s of docs/term-deposits.md, "Checks, in order"). They run before a correlation id is
 * consumed.
 */
import { errorCatalogue as E, BusinessRefusal } from '../error-catalogue.js';
import { addDays, isCalendarDate, toEpochDay } from '../calendar-date.js';
import { decimalExceeds, decimalOf, plainDecimal, significantDigits, significantDigitsMax, writtenNumber, type NumberSource } from '../money.js';
import { requestedAmountMinor } from '../requested-amount.js';

/** The request body after schema validation (the term deposit spells `currencycode`: docs/api.md, "Order of checks"). */
export interface TermDepositInitiationBody {
  customerReference: string;
  termDepositProduct: { productCode: string; componentCode: string };
  principalAmount: { amountValue: number; amountCurrency: { currencycode: string }; amountType: 'Principal' };
  interestRate: { rateValue: number; rateType: 'Nominal' };
  termDepositPeriod?: { numberOfDays?: number; maturityDate?: string };
  valueDate: string;
  sourceAccount: { accountIdentification: string; accountType: 'DebitAccount' };
  interestSettlementAccount: { accountIdentification: string; accountType: 'CreditAccount' };
  transactionDescription?: string;
}

export interface TermDepositInitiation {
  customerReference: string;
  productCode: string;
  componentCode: string;
  principalMinor: bigint;
  currency: string;
  /** Annual rate in percent, as the exact decimal the client sent ("5.25"). */
  ratePercent: string;
  numberOfDays: number | undefined;
  maturityDate: string | undefined;
  valueDate: string;
  sourceAccount: string;
  interestAccount: string;
  description: string | null;
}

/** A percentage per year, > 0 and at most 100 (docs/term-deposits.md, "Decisions"). */
const ratePercentMax = 100;

/** `numbers`: where the amount's and the rate's source texts are (the API's JSON reader). */
export function validateInitiation(body: TermDepositInitiationBody, numbers?: NumberSource): TermDepositInitiation {
  const currency = body.principalAmount.amountCurrency.currencycode;
  const principalMinor = requestedAmountMinor(writtenNumber(body.principalAmount, 'amountValue', numbers), currency, {
    amount: 'principalAmount.amountValue',
    currency: 'principalAmount.amountCurrency.currencycode',
  });
  const ratePercent = validateRate(writtenNumber(body.interestRate, 'rateValue', numbers));
  for (const [field, date] of [
    ['valueDate', body.valueDate],
    ['termDepositPeriod.maturityDate', body.termDepositPeriod?.maturityDate],
  ] as const) {
    if (date !== undefined && !isCalendarDate(date)) throw new BusinessRefusal(E.invalidDate, `${field} "${date}" is not a calendar date (YYYY-MM-DD)`);
  }
  const numberOfDays = body.termDepositPeriod?.numberOfDays;
  const maturityDate = body.termDepositPeriod?.maturityDate;
  if (numberOfDays === undefined && maturityDate === undefined) {
    throw new BusinessRefusal(E.missingTerm, 'termDepositPeriod needs numberOfDays or maturityDate');
  }
  if (maturityDate !== undefined && toEpochDay(maturityDate) <= toEpochDay(body.valueDate)) {
    throw new BusinessRefusal(E.maturityNotAfterValueDate, `maturityDate ${maturityDate} is not after valueDate ${body.valueDate}`);
  }
  // Both given: the maturity may be the plain sum or that sum rolled to a business day, which
  // only the core's calendar can tell; a maturity before the plain sum disagrees in any calendar.
  if (numberOfDays !== undefined && maturityDate !== undefined && toEpochDay(maturityDate) < toEpochDay(addDays(body.valueDate, numberOfDays))) {
    throw new BusinessRefusal(E.termMismatch, `numberOfDays ${numberOfDays} from ${body.valueDate} does not end on maturityDate ${maturityDate}`);
  }
  return {
    customerReference: body.customerReference,
    productCode: body.termDepositProduct.productCode,
    componentCode: body.termDepositProduct.componentCode,
    principalMinor,
    currency,
    ratePercent,
    numberOfDays,
    maturityDate,
    valueDate: body.valueDate,
    sourceAccount: body.sourceAccount.accountIdentification,
    interestAccount: body.interestSettlementAccount.accountIdentification,
    description: body.transactionDescription ?? null,
  };
}

/**
 * A rate's decimals: a rate below 10^-12 percent earns nothing on any principal a deposit can
 * hold, and "1e-400" written out would be 400 digits that no column or core takes.
 */
const rateDecimalsMax = 12;

/** The rate as the exact decimal written ("5.25"), compared exactly: "100.0000000000000001" is over 100. */
function validateRate(rateText: string): string {
  const decimal = decimalOf(rateText);
  if (
    !decimal ||
    decimal.negative ||
    decimal.digits === 0n ||
    decimalExceeds(decimal, ratePercentMax) ||
    significantDigits(decimal) > significantDigitsMax ||
    decimal.scale > rateDecimalsMax
  ) {
    throw new BusinessRefusal(
      E.invalidInterestRate,
      `interestRate.rateValue must be greater than 0 and at most ${ratePercentMax} (percent per year), with at most ${significantDigitsMax} significant digits and ${rateDecimalsMax} decimals, got ${rateText}`,
    );
  }
  return plainDecimal(decimal);
}
