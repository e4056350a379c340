/**
 * The term deposit constitution's rules that need the core's records (the 404s and 422s of
 * docs/term-deposits.md, "Checks, in order"), as a pure function: the facts the core read in, the
 * contract and its balanced movement out, or the first broken rule. The checks run in the order the
 * error table documents.
 */
import { accept, refuse, type Decision } from '../decision.js';
import { activeStatus, type Account, type Customer, type TermDepositContract, type TermDepositProduct } from '../domain.js';
import type { BusinessCalendar } from '../business-calendar.js';
import { addDays, daysBetween, toEpochDay } from '../calendar-date.js';
import { errorCatalogue as E } from '../error-catalogue.js';
import { canPost, customerAccountKind, type PostingLine } from '../ledger/movement.js';
import { formatMinor, toMinorUnits } from '../money.js';
import type { TermDepositInitiation } from './initiation.js';

export interface ConstitutionFacts {
  customer: Customer | undefined;
  source: Account | undefined;
  interestAccount: Account | undefined;
  product: TermDepositProduct | undefined;
  calendar: BusinessCalendar;
  /** The number the core gives the new contract. */
  contractNumber: string;
}

export interface ConstitutionPlan {
  contract: TermDepositContract;
  /** Source account → contract account, the principal. */
  lines: PostingLine[];
}

export function decideConstitution(reference: string, command: TermDepositInitiation, facts: ConstitutionFacts): Decision<ConstitutionPlan> {
  const { customer, source, interestAccount, product, calendar } = facts;
  if (!customer) return refuse(E.customerNotFound, `customer ${command.customerReference} not found`);
  if (!source) return refuse(E.sourceAccountNotFound, `source account ${command.sourceAccount} not found`);
  if (!interestAccount) return refuse(E.interestAccountNotFound, `interest settlement account ${command.interestAccount} not found`);
  if (customer.status !== activeStatus) return refuse(E.customerBlocked, `customer ${customer.customerReference} is ${customer.status.toLowerCase()}`);

  if (!product?.active) {
    return refuse(E.productNotAvailable, `product ${command.productCode}/${command.componentCode} is ${product ? 'inactive' : 'unknown'}`);
  }
  if (!product.currencies.includes(command.currency)) {
    return refuse(E.currencyNotOffered, `product ${product.productCode}/${product.componentCode} is not offered in ${command.currency}`);
  }
  const minMinor = toMinorUnits(Number(product.minAmount), command.currency);
  const maxMinor = toMinorUnits(Number(product.maxAmount), command.currency);
  if (command.principalMinor < minMinor || command.principalMinor > maxMinor) {
    return refuse(
      E.amountOutsideProductLimits,
      `principal ${formatMinor(command.principalMinor, command.currency)} ${command.currency} is outside the product's limits ${product.minAmount}-${product.maxAmount}`,
    );
  }

  const accountProblem = customerAccountProblem(source, 'source', customer.customerReference) ?? customerAccountProblem(interestAccount, 'interest settlement', customer.customerReference);
  if (accountProblem) return accountProblem;
  if (source.currency !== command.currency) {
    return refuse(E.currencyMismatchSource, `source account ${source.accountNumber} is in ${source.currency}, the principal in ${command.currency}`);
  }

  if (toEpochDay(command.valueDate) < toEpochDay(calendar.businessDate)) {
    return refuse(E.valueDateBeforeBusinessDate, `valueDate ${command.valueDate} is before the core's business date ${calendar.businessDate}`);
  }
  if (!calendar.isBusinessDay(command.valueDate)) return refuse(E.valueDateNotBusinessDay, `valueDate ${command.valueDate} is not a business day: the next business day is ${calendar.rollForward(command.valueDate)}`);
  const maturity = maturityOf(calendar, command);
  if (!maturity.ok) return maturity;
  const maturityDate = maturity.value;
  const numberOfDays = daysBetween(command.valueDate, maturityDate);
  if (numberOfDays < product.minDays || numberOfDays > product.maxDays) {
    return refuse(E.termOutsideProductLimits, `term of ${numberOfDays} days (to ${maturityDate}) is outside the product's ${product.minDays}-${product.maxDays} days`);
  }
  if (!canPost(source, -command.principalMinor)) {
    return refuse(E.insufficientFundsSource, `source account ${source.accountNumber} cannot cover ${formatMinor(command.principalMinor, command.currency)} ${command.currency}`);
  }

  const { contractNumber } = facts;
  return accept({
    contract: {
      contractNumber,
      customerReference: customer.customerReference,
      productCode: product.productCode,
      componentCode: product.componentCode,
      principalMinor: command.principalMinor,
      currency: command.currency,
      ratePercent: command.ratePercent,
      dayCount: product.dayCount,
      valueDate: command.valueDate,
      maturityDate,
      numberOfDays,
      sourceAccount: source.accountNumber,
      interestAccount: interestAccount.accountNumber,
      description: command.description ?? `Term deposit ${contractNumber}`,
      operationReference: reference,
      status: activeStatus,
    },
    lines: [
      { accountNumber: source.accountNumber, amountMinor: -command.principalMinor, currency: command.currency },
      { accountNumber: contractNumber, amountMinor: command.principalMinor, currency: command.currency },
    ],
  });
}

function customerAccountProblem(account: Account, role: string, customerReference: string): Decision<never> | undefined {
  if (account.status !== activeStatus) return refuse(E.accountNotActive, `${role} account ${account.accountNumber} is ${account.status.toLowerCase()}`);
  if (account.customerReference !== customerReference || account.kind !== customerAccountKind) {
    return refuse(E.accountNotCustomers, `${role} account ${account.accountNumber} does not belong to customer ${customerReference}`);
  }
  return undefined;
}

/** Value date + days rolled forward to a business day, or the explicit maturity date (docs/term-deposits.md, "Decisions"). */
function maturityOf(calendar: BusinessCalendar, command: TermDepositInitiation): Decision<string> {
  if (command.maturityDate !== undefined) {
    if (!calendar.isBusinessDay(command.maturityDate)) return refuse(E.maturityNotBusinessDay, `maturityDate ${command.maturityDate} is not a business day: the next business day is ${calendar.rollForward(command.maturityDate)}`);
    if (command.numberOfDays !== undefined) {
      const plain = addDays(command.valueDate, command.numberOfDays);
      if (command.maturityDate !== plain && command.maturityDate !== calendar.rollForward(plain)) {
        return refuse(E.termMismatch, `numberOfDays ${command.numberOfDays} from ${command.valueDate} does not end on maturityDate ${command.maturityDate}`);
      }
    }
    return accept(command.maturityDate);
  }
  return accept(calendar.rollForward(addDays(command.valueDate, command.numberOfDays ?? 0)));
}
