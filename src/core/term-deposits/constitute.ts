/**
 * The reference core's term deposit constitution: the rules that need stored data (SPEC rules
 * 1-7, CONTRACT §6 404s and 422s), then one balanced movement from the source account to the new
 * contract account. Runs inside the caller's unit of work.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { findAccount, findCustomer, findProduct, insertAccountIfMissing, insertTermDeposit, type AccountRecord } from '../../store/banking.js';
import { InsufficientFunds, postMovement } from '../../store/ledger.js';
import type { BusinessCalendar } from '../business-calendar.js';
import { addDays, daysBetween, toEpochDay } from '../calendar-date.js';
import { errorCatalogue as E, BusinessRefusal } from '../error-catalogue.js';
import { formatMinor, toMinorUnits } from '../money.js';
import type { TermDeposit, UnitOfWork } from '../port.js';
import type { TermDepositInitiation } from './initiation.js';
import { interestAtMaturityMinor } from './interest.js';

export const termDepositAccountKind = 'term_deposit';
const activeStatus = 'Active';

export async function constituteTermDeposit(
  uow: UnitOfWork,
  calendar: BusinessCalendar,
  reference: string,
  command: TermDepositInitiation,
): Promise<TermDeposit> {
  const customer = await findCustomer(uow, command.customerReference);
  if (!customer) throw new BusinessRefusal(E.customerNotFound, `customer ${command.customerReference} not found`);
  const source = await findAccount(uow, command.sourceAccount);
  if (!source) throw new BusinessRefusal(E.sourceAccountNotFound, `source account ${command.sourceAccount} not found`);
  const interestAccount = await findAccount(uow, command.interestAccount);
  if (!interestAccount) {
    throw new BusinessRefusal(E.interestAccountNotFound, `interest settlement account ${command.interestAccount} not found`);
  }
  if (customer.status !== activeStatus) {
    throw new BusinessRefusal(E.customerBlocked, `customer ${customer.customerReference} is ${customer.status.toLowerCase()}`);
  }

  const product = await findProduct(uow, command.productCode, command.componentCode);
  if (!product?.active) {
    throw new BusinessRefusal(E.productNotAvailable, `product ${command.productCode}/${command.componentCode} is ${product ? 'inactive' : 'unknown'}`);
  }
  if (!product.currencies.includes(command.currency)) {
    throw new BusinessRefusal(E.currencyNotOffered, `product ${product.productCode}/${product.componentCode} is not offered in ${command.currency}`);
  }
  const minMinor = toMinorUnits(Number(product.minAmount), command.currency);
  const maxMinor = toMinorUnits(Number(product.maxAmount), command.currency);
  if (command.principalMinor < minMinor || command.principalMinor > maxMinor) {
    throw new BusinessRefusal(
      E.amountOutsideProductLimits,
      `principal ${formatMinor(command.principalMinor, command.currency)} ${command.currency} is outside the product's limits ${product.minAmount}-${product.maxAmount}`,
    );
  }

  checkCustomerAccount(source, 'source', customer.customerReference);
  checkCustomerAccount(interestAccount, 'interest settlement', customer.customerReference);
  if (source.currency !== command.currency) {
    throw new BusinessRefusal(E.currencyMismatchSource, `source account ${source.accountNumber} is in ${source.currency}, the principal in ${command.currency}`);
  }

  if (toEpochDay(command.valueDate) < toEpochDay(calendar.businessDate)) {
    throw new BusinessRefusal(E.valueDateBeforeBusinessDate, `valueDate ${command.valueDate} is before the core's business date ${calendar.businessDate}`);
  }
  if (!calendar.isBusinessDay(command.valueDate)) {
    throw new BusinessRefusal(E.valueDateNotBusinessDay, `valueDate ${command.valueDate} is not a business day`);
  }
  const maturityDate = maturityOf(calendar, command);
  const numberOfDays = daysBetween(command.valueDate, maturityDate);
  if (numberOfDays < product.minDays || numberOfDays > product.maxDays) {
    throw new BusinessRefusal(
      E.termOutsideProductLimits,
      `term of ${numberOfDays} days (to ${maturityDate}) is outside the product's ${product.minDays}-${product.maxDays} days`,
    );
  }

  const contractNumber = `TD${String(randomInt(0, 2 ** 47)).padStart(15, '0')}`;
  const description = command.description ?? `Term deposit ${contractNumber}`;
  await insertAccountIfMissing(uow, {
    accountNumber: contractNumber,
    customerReference: customer.customerReference,
    currency: command.currency,
    status: activeStatus,
    kind: termDepositAccountKind,
  });
  try {
    await postMovement(uow, {
      id: randomUUID(),
      reference,
      kind: 'term_deposit_constitution',
      description,
      businessDate: calendar.businessDate,
      lines: [
        { accountNumber: source.accountNumber, amountMinor: -command.principalMinor, currency: command.currency },
        { accountNumber: contractNumber, amountMinor: command.principalMinor, currency: command.currency },
      ],
    });
  } catch (error) {
    if (error instanceof InsufficientFunds) {
      throw new BusinessRefusal(
        E.insufficientFundsSource,
        `source account ${source.accountNumber} cannot cover ${formatMinor(command.principalMinor, command.currency)} ${command.currency}`,
      );
    }
    throw error;
  }
  const record = {
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
    description,
    operationReference: reference,
    status: activeStatus,
    createdAt: new Date().toISOString(),
  };
  await insertTermDeposit(uow, record);
  return withInterest(record);
}

export function withInterest(record: Omit<TermDeposit, 'expectedInterestMinor'>): TermDeposit {
  return {
    ...record,
    expectedInterestMinor: interestAtMaturityMinor(record.principalMinor, record.ratePercent, record.numberOfDays, record.dayCount),
  };
}

function checkCustomerAccount(account: AccountRecord, role: string, customerReference: string): void {
  if (account.status !== activeStatus) {
    throw new BusinessRefusal(E.accountNotActive, `${role} account ${account.accountNumber} is ${account.status.toLowerCase()}`);
  }
  if (account.customerReference !== customerReference || account.kind !== 'customer') {
    throw new BusinessRefusal(E.accountNotCustomers, `${role} account ${account.accountNumber} does not belong to customer ${customerReference}`);
  }
}

/** CONTRACT §6: value date + days rolled forward to a business day, or the explicit maturity date. */
function maturityOf(calendar: BusinessCalendar, command: TermDepositInitiation): string {
  if (command.maturityDate !== undefined) {
    if (!calendar.isBusinessDay(command.maturityDate)) {
      throw new BusinessRefusal(E.maturityNotBusinessDay, `maturityDate ${command.maturityDate} is not a business day`);
    }
    if (command.numberOfDays !== undefined) {
      const plain = addDays(command.valueDate, command.numberOfDays);
      if (command.maturityDate !== plain && command.maturityDate !== calendar.rollForward(plain)) {
        throw new BusinessRefusal(E.termMismatch, `numberOfDays ${command.numberOfDays} from ${command.valueDate} does not end on maturityDate ${command.maturityDate}`);
      }
    }
    return command.maturityDate;
  }
  return calendar.rollForward(addDays(command.valueDate, command.numberOfDays ?? 0));
}
