// The example core's bank, in memory: customers, accounts with balances in minor units, term
// deposit products and contracts, loan facilities, the directory, the calendar and business date,
// each operation reference's outcome, and the core's events. Written from docs/core-port.md,
// docs/core-protocol.md, docs/term-deposits.md, docs/loans.md and docs/business-days.md; the
// refusal names and codes are docs/core-protocol.md's "Refusals". Money is BigInt minor units.
import { randomInt, randomUUID } from 'node:crypto';

// The refusals a core decides, by name, with their codes (docs/core-protocol.md, "Refusals").
export const REFUSALS = {
  customerNotFound: 'TD-404-001', sourceAccountNotFound: 'TD-404-002', interestAccountNotFound: 'TD-404-003',
  customerBlocked: 'TD-422-001', insufficientFundsSource: 'TD-422-002', productNotAvailable: 'TD-422-003',
  amountOutsideProductLimits: 'TD-422-004', termOutsideProductLimits: 'TD-422-005', accountNotActive: 'TD-422-006',
  accountNotCustomers: 'TD-422-007', currencyMismatchSource: 'TD-422-008', currencyNotOffered: 'TD-422-009',
  valueDateNotBusinessDay: 'TD-422-010', valueDateBeforeBusinessDate: 'TD-422-011', maturityNotBusinessDay: 'TD-422-012',
  termMismatch: 'TD-400-011',
  facilityNotFound: 'ML-404-001', installmentNotFound: 'ML-404-002', paymentAccountNotFound: 'ML-404-003',
  expenseAccountNotFound: 'ML-404-004', maturityAfterFinalMaturity: 'ML-400-013', installmentPaid: 'ML-409-010',
  facilityClosed: 'ML-409-011', loanTypeMismatch: 'ML-422-001', parameterTypeMismatch: 'ML-422-002',
  parameterTypeNotSupported: 'ML-422-003', loanCurrencyMismatch: 'ML-422-004', amountAboveOutstanding: 'ML-422-005',
  approvedLimitExceeded: 'ML-422-006', insufficientFundsPayment: 'ML-422-007', insufficientFundsExpense: 'ML-422-008',
  loanAccountNotActive: 'ML-422-009', loanAccountNotCustomers: 'ML-422-010',
};

export const WEEKDAYS = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];
const DAY_MS = 86_400_000;
export const epochDay = (date) => Date.parse(`${date}T00:00:00Z`) / DAY_MS;
export const addDays = (date, days) => new Date((epochDay(date) + days) * DAY_MS).toISOString().slice(0, 10);
export const isCalendarDate = (text) => typeof text === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(epochDay(text)) && addDays(text, 0) === text;

// ISO 4217: the currencies Intl knows, and their minor units (USD 2, JPY 0, BHD 3).
const CURRENCIES = new Set(Intl.supportedValuesOf('currency'));
export const isCurrency = (code) => typeof code === 'string' && CURRENCIES.has(code);
export const exponentOf = (currency) => new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits;

/** A decimal written as text ("5.25", "0.0015", "1e-7") as digits and a scale: exact, never a float. */
export function decimal(text) {
  const match = /^(\d+)(?:\.(\d+))?(?:e-(\d+))?$/.exec(String(text));
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  return { digits: BigInt(match[1] + fraction), scale: fraction.length + Number(match[3] ?? 0) };
}

/** A data file amount (a JSON number in the major unit) as minor units, or undefined when not exact. */
export function toMinor(amount, currency) {
  const value = decimal(amount);
  const exponent = exponentOf(currency);
  if (!value || value.scale > exponent) return undefined;
  return value.digits * 10n ** BigInt(exponent - value.scale);
}

export function formatMinor(minor, currency) {
  const exponent = exponentOf(currency);
  const text = minor.toString().padStart(exponent + 1, '0');
  return exponent === 0 ? text : `${text.slice(0, -exponent)}.${text.slice(-exponent)}`;
}

export class Bank {
  constructor({ businessDate, broken, weekend = ['SATURDAY', 'SUNDAY'] }) {
    this.businessDate = businessDate;
    this.broken = broken; // one rule broken on purpose (server.mjs --break), or undefined
    this.weekend = new Set(weekend); // until a first load's calendar says otherwise
    this.holidays = new Set();
    this.loads = 0;
    this.users = new Map();
    this.workstations = new Map();
    this.customers = new Map();
    this.accounts = new Map();
    this.products = new Map();
    this.facilities = new Map();
    this.deposits = new Map();
    this.outcomes = new Map(); // reference → { family, answer } or { fenced: true }
    this.events = [];
  }

  isBusinessDay(date) {
    return !this.weekend.has(WEEKDAYS[(((epochDay(date) + 4) % 7) + 7) % 7]) && !this.holidays.has(date);
  }

  rollForward(date) {
    let day = date;
    while (!this.isBusinessDay(day)) day = addDays(day, 1);
    return day;
  }

  /** Half-up to the minor unit (the break `round-down` truncates instead). */
  divide(numerator, denominator) {
    return this.broken === 'round-down' ? numerator / denominator : (numerator * 2n + denominator) / (denominator * 2n);
  }

  refuse(name, message, family) {
    // notExecuted (a fenced reference) is in both families: TD-502-002 for a deposit, ML-502-002 for a loan.
    let code = name === 'notExecuted' ? `${family}-502-002` : REFUSALS[name];
    // The break `refusal-family`: one refusal answered with the other family's code.
    if (this.broken === 'refusal-family' && name === 'productNotAvailable') code = code.replace('TD-', 'ML-');
    return { status: 'Rejected', refusal: { name, code, message } };
  }

  // ----- At most once per reference (docs/core-port.md "At most once", "Fencing") -----

  /** The outcome of `reference`: the stored one, or `execute()`'s, stored; a fenced reference never executes. */
  once(reference, family, execute) {
    const stored = this.outcomes.get(reference);
    if (stored?.fenced) return this.refuse('notExecuted', `reference ${reference} was fenced: it never executes`, family);
    if (stored && stored.family !== family) throw new Error(`reference ${reference} belongs to the other operation`);
    const again = this.broken === 'execute-twice' && stored?.answer.status === 'Executed';
    if (stored && !again) return stored.answer;
    const answer = execute();
    this.outcomes.set(reference, { family, answer });
    return answer;
  }

  lookup(reference, family) {
    const stored = this.outcomes.get(reference);
    if (!stored) return { status: 'NotFound' };
    if (stored.fenced) return this.refuse('notExecuted', `reference ${reference} was fenced: it never executes`, family);
    if (stored.family !== family) throw new Error(`reference ${reference} belongs to the other operation`);
    return stored.answer;
  }

  fence(reference) {
    if (this.broken === 'ignore-fence') return;
    if (!this.outcomes.has(reference)) this.outcomes.set(reference, { fenced: true });
  }

  // ----- Term deposits (docs/term-deposits.md "Checks, in order", "Decisions") -----

  constitute(reference, c) {
    return this.once(reference, 'TD', () => {
      const no = (name, message) => this.refuse(name, message, 'TD');
      const customer = this.customers.get(c.customerReference);
      const source = this.accounts.get(c.sourceAccount);
      const interest = this.accounts.get(c.interestAccount);
      if (!customer) return no('customerNotFound', `customer ${c.customerReference} not found`);
      if (!source) return no('sourceAccountNotFound', `source account ${c.sourceAccount} not found`);
      if (!interest) return no('interestAccountNotFound', `interest settlement account ${c.interestAccount} not found`);
      if (customer.status !== 'Active') return no('customerBlocked', `customer ${c.customerReference} is ${customer.status}`);
      const product = this.products.get(`${c.productCode}/${c.componentCode}`);
      if (!product?.active) return no('productNotAvailable', `product ${c.productCode}/${c.componentCode} is unknown or inactive`);
      if (!product.currencies.includes(c.currency)) return no('currencyNotOffered', `the product is not offered in ${c.currency}`);
      const principal = BigInt(c.principalMinor);
      if (principal < toMinor(product.minAmount, c.currency) || principal > toMinor(product.maxAmount, c.currency)) return no('amountOutsideProductLimits', 'the principal is outside the product\'s limits');
      for (const [role, account] of [['source', source], ['interest settlement', interest]]) {
        if (account.status !== 'Active') return no('accountNotActive', `${role} account ${account.number} is ${account.status}`);
        if (account.customer !== c.customerReference || account.kind !== 'customer') return no('accountNotCustomers', `${role} account ${account.number} is not the customer's`);
      }
      if (source.currency !== c.currency) return no('currencyMismatchSource', `source account ${source.number} is in ${source.currency}`);
      if (epochDay(c.valueDate) < epochDay(this.businessDate)) return no('valueDateBeforeBusinessDate', `valueDate ${c.valueDate} is before the business date ${this.businessDate}`);
      if (!this.isBusinessDay(c.valueDate)) return no('valueDateNotBusinessDay', `valueDate ${c.valueDate} is not a business day`);
      let maturityDate;
      if (c.maturityDate !== undefined) {
        if (!this.isBusinessDay(c.maturityDate)) return no('maturityNotBusinessDay', `maturityDate ${c.maturityDate} is not a business day`);
        const plain = c.numberOfDays === undefined ? undefined : addDays(c.valueDate, c.numberOfDays);
        if (plain !== undefined && c.maturityDate !== plain && c.maturityDate !== this.rollForward(plain)) return no('termMismatch', 'numberOfDays and maturityDate disagree');
        maturityDate = c.maturityDate;
      } else {
        const plain = addDays(c.valueDate, c.numberOfDays);
        maturityDate = this.broken === 'no-roll' ? plain : this.rollForward(plain);
      }
      const days = epochDay(maturityDate) - epochDay(c.valueDate);
      if (days < product.minDays || days > product.maxDays) return no('termOutsideProductLimits', `a term of ${days} days is outside the product's`);
      if (source.balance < principal) return no('insufficientFundsSource', `source account ${source.number} cannot cover ${formatMinor(principal, c.currency)} ${c.currency}`);
      const rate = decimal(c.ratePercent);
      const basis = product.dayCount === 'ACT/365' ? 365n : 360n;
      const contractNumber = `TD${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e6)).padStart(6, '0')}`;
      const deposit = {
        contractNumber, customerReference: c.customerReference, productCode: c.productCode, componentCode: c.componentCode,
        principalMinor: principal, currency: c.currency, ratePercent: c.ratePercent, dayCount: product.dayCount,
        valueDate: c.valueDate, maturityDate, numberOfDays: days, sourceAccount: source.number, interestAccount: interest.number,
        description: c.description ?? `Term deposit ${contractNumber}`, operationReference: reference, status: 'Active',
        expectedInterestMinor: this.divide(principal * rate.digits * BigInt(days), 100n * 10n ** BigInt(rate.scale) * basis),
      };
      source.balance -= principal;
      this.accounts.set(contractNumber, { number: contractNumber, customer: c.customerReference, currency: c.currency, balance: principal, status: 'Active', kind: 'term_deposit' });
      this.deposits.set(contractNumber, deposit);
      return { status: 'Executed', result: deposit };
    });
  }

  // ----- Loan installments (docs/loans.md "Checks, in order", "The execution") -----

  payInstallment(reference, c) {
    return this.once(reference, 'ML', () => {
      const no = (name, message) => this.refuse(name, message, 'ML');
      const facility = this.facilities.get(c.loanId);
      if (!facility) return no('facilityNotFound', `facility ${c.loanId} not found`);
      const installment = facility.installments.get(c.sequence);
      if (!installment) return no('installmentNotFound', `facility ${c.loanId} has no installment ${c.sequence}`);
      const payment = this.accounts.get(c.paymentAccount);
      const expense = this.accounts.get(c.expenseAccount);
      if (!payment) return no('paymentAccountNotFound', `payment account ${c.paymentAccount} not found`);
      if (!expense) return no('expenseAccountNotFound', `expense account ${c.expenseAccount} not found`);
      if (c.maturityDate !== undefined && epochDay(c.maturityDate) > epochDay(facility.finalMaturityDate)) return no('maturityAfterFinalMaturity', `loanMaturityDate is after ${facility.finalMaturityDate}`);
      if (facility.status !== 'Active') return no('facilityClosed', `facility ${c.loanId} is ${facility.status}`);
      const outstanding = installment.amountMinor - installment.paidMinor;
      if (outstanding <= 0n) return no('installmentPaid', `installment ${c.sequence} is already paid`);
      if (['LetterOfCredit', 'BankerAcceptance'].includes(c.parameterType)) return no('parameterTypeNotSupported', `${c.parameterType} is not supported yet`);
      if (c.parameterType !== facility.parameterType) return no('parameterTypeMismatch', `the facility is ${facility.parameterType}`);
      if (c.loanType !== facility.loanType) return no('loanTypeMismatch', `the facility's loan type is ${facility.loanType}`);
      if (c.currency !== undefined && c.currency !== facility.currency) return no('loanCurrencyMismatch', `the facility is in ${facility.currency}`);
      for (const [role, account] of [['payment', payment], ['expense', expense]]) {
        if (account.currency !== facility.currency) return no('loanCurrencyMismatch', `${role} account ${account.number} is in ${account.currency}`);
        if (account.status !== 'Active') return no('loanAccountNotActive', `${role} account ${account.number} is ${account.status}`);
        if (account.kind !== 'customer' || account.customer !== facility.customer) return no('loanAccountNotCustomers', `${role} account ${account.number} is not the facility customer's`);
      }
      const amount = c.amountMinor === undefined ? outstanding : BigInt(c.amountMinor);
      if (amount > outstanding) return no('amountAboveOutstanding', `the amount is above the outstanding ${formatMinor(outstanding, facility.currency)}`);
      if (facility.executedMinor + amount > facility.approvedLimitMinor) return no('approvedLimitExceeded', 'the facility\'s approved limit would be exceeded');
      const { charges } = facility;
      const rate = decimal(charges.commissionRate);
      const proportional = this.divide(amount * rate.digits, 10n ** BigInt(rate.scale));
      const commission = proportional > charges.minimumCommissionMinor ? proportional : charges.minimumCommissionMinor;
      const tax = decimal(charges.taxRate);
      const taxMinor = this.divide((commission + charges.fixedFeeMinor) * tax.digits, 10n ** BigInt(tax.scale));
      const chargesTotal = commission + charges.fixedFeeMinor + taxMinor;
      const fromPayment = payment === expense ? amount + chargesTotal : amount;
      if (payment.balance < fromPayment) return no('insufficientFundsPayment', `payment account ${payment.number} cannot cover it`);
      if (payment !== expense && expense.balance < chargesTotal) return no('insufficientFundsExpense', `expense account ${expense.number} cannot cover the charges`);
      payment.balance -= amount;
      expense.balance -= chargesTotal;
      installment.paidMinor += amount;
      if (installment.paidMinor === installment.amountMinor) installment.status = 'Paid';
      facility.executedMinor += amount;
      return {
        status: 'Executed',
        result: {
          operationId: `MLO${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e6)).padStart(6, '0')}`, executionReference: reference,
          loanId: c.loanId, sequence: c.sequence, amountMinor: amount, commissionMinor: commission, feeMinor: charges.fixedFeeMinor, taxMinor,
          currency: facility.currency, paymentAccount: payment.number, expenseAccount: expense.number,
          facilityStatus: amount === outstanding ? 'Executed' : 'PartiallyExecuted', executedAt: new Date().toISOString(),
        },
      };
    });
  }

  // ----- The load side (docs/core-protocol.md "The load side"): only what is missing is added -----

  /** Adds the data file's core part; a refused document throws { field, message } and nothing is loaded. */
  load(document) {
    const refuse = (field, message) => {
      throw Object.assign(new Error(message), { field });
    };
    const sections = ['businessDate', 'calendar', 'users', 'workstations', 'customers', 'accounts', 'termDepositProducts', 'merchandisingLoans'];
    for (const section of Object.keys(document)) if (!sections.includes(section)) refuse(section, `${section} is not the core's: realms and webhooks belong to the API`);
    // A field of the wrong shape is refused by name (400 DATA_REFUSED), never a crash (500).
    const object = (field, value) => (typeof value === 'object' && value !== null && !Array.isArray(value) ? value : refuse(field, 'is not an object'));
    const array = (field, value) => (Array.isArray(value) ? value : refuse(field, 'is not a list'));
    const list = (section) => (document[section] === undefined ? [] : array(section, document[section]).map((item, i) => object(`${section}[${i}]`, item)));
    const text = (field, value) => (typeof value === 'string' && value.length > 0 && value.length <= 128 ? value : refuse(field, 'is not a name of 1-128 characters'));
    const status = (field, value) => (['Active', 'Disabled', 'Blocked'].includes(value) ? value : refuse(field, 'is not Active, Disabled or Blocked'));
    const currency = (field, value) => (isCurrency(value) ? value : refuse(field, `"${value}" is not an ISO 4217 currency`));
    const minor = (field, value, inCurrency) => (typeof value === 'number' && value >= 0 && toMinor(value, inCurrency) !== undefined ? toMinor(value, inCurrency) : refuse(field, `${value} is not an exact amount of ${inCurrency}`));
    const rate = (field, value) => (typeof value === 'number' && value >= 0 && decimal(value) !== undefined ? String(value) : refuse(field, `${value} is not a rate`));
    const days = (field, value) => (Number.isInteger(value) && value >= 1 && value <= 36_600 ? value : refuse(field, 'is not a number of days from 1 to 36600'));
    const date = (field, value) => (isCalendarDate(value) ? value : refuse(field, `"${value}" is not a calendar date`));
    // Check everything first: a refused document loads nothing.
    const users = list('users').map((u, i) => [text(`users[${i}].login`, u.login), status(`users[${i}].status`, u.status)]);
    const workstations = list('workstations').map((w, i) => [text(`workstations[${i}].id`, w.id), status(`workstations[${i}].status`, w.status)]);
    const customers = list('customers').map((c, i) => [text(`customers[${i}].customerReference`, c.customerReference), { name: c.name ?? null, status: status(`customers[${i}].status`, c.status) }]);
    const known = new Set([...this.customers.keys(), ...customers.map(([reference]) => reference)]);
    const owner = (field, value) => (known.has(value) ? value : refuse(field, `customer "${value}" is not in customers`));
    const accounts = list('accounts').map((a, i) => {
      const inCurrency = currency(`accounts[${i}].currency`, a.currency);
      return { number: text(`accounts[${i}].accountNumber`, a.accountNumber), customer: owner(`accounts[${i}].customerReference`, a.customerReference), currency: inCurrency, balance: minor(`accounts[${i}].balance`, a.balance, inCurrency), status: status(`accounts[${i}].status`, a.status), kind: 'customer' };
    });
    const products = list('termDepositProducts').map((p, i) => {
      const field = `termDepositProducts[${i}]`;
      const currencies = array(`${field}.currencies`, p.currencies).map((code, j) => currency(`${field}.currencies[${j}]`, code));
      for (const code of currencies) for (const limit of ['minAmount', 'maxAmount']) minor(`${field}.${limit}`, p[limit], code);
      if (typeof p.active !== 'boolean') refuse(`${field}.active`, 'is not true or false');
      if (days(`${field}.minDays`, p.minDays) > days(`${field}.maxDays`, p.maxDays)) refuse(`${field}.minDays`, 'is above maxDays');
      if (!['ACT/360', 'ACT/365'].includes(p.dayCount)) refuse(`${field}.dayCount`, 'is not ACT/360 or ACT/365');
      return [`${text(`${field}.productCode`, p.productCode)}/${text(`${field}.componentCode`, p.componentCode)}`, { ...p, currencies }];
    });
    const facilities = list('merchandisingLoans').map((l, i) => {
      const field = `merchandisingLoans[${i}]`;
      const inCurrency = currency(`${field}.currency`, l.currency);
      const charges = object(`${field}.charges`, l.charges);
      const installments = new Map(array(`${field}.installments`, l.installments).map((item, j) => {
        const it = object(`${field}.installments[${j}]`, item);
        const at = `${field}.installments[${j}]`;
        return [days(`${at}.sequence`, it.sequence), { dueDate: date(`${at}.dueDate`, it.dueDate), amountMinor: minor(`${at}.amount`, it.amount, inCurrency), paidMinor: minor(`${at}.amountPaid`, it.amountPaid ?? 0, inCurrency), status: 'Pending' }];
      }));
      for (const installment of installments.values()) if (installment.paidMinor >= installment.amountMinor) installment.status = 'Paid';
      return [text(`${field}.merchandisingLoanId`, l.merchandisingLoanId), {
        customer: owner(`${field}.customerReference`, l.customerReference), loanType: text(`${field}.merchandisingLoanType`, l.merchandisingLoanType),
        parameterType: text(`${field}.merchandisingLoanFacilityParameterType`, l.merchandisingLoanFacilityParameterType), currency: inCurrency,
        approvedLimitMinor: minor(`${field}.approvedLimit`, l.approvedLimit, inCurrency), status: text(`${field}.status`, l.status), finalMaturityDate: date(`${field}.finalMaturityDate`, l.finalMaturityDate),
        charges: { fixedFeeMinor: minor(`${field}.charges.fixedFee`, charges.fixedFee, inCurrency), commissionRate: rate(`${field}.charges.commissionRate`, charges.commissionRate), minimumCommissionMinor: minor(`${field}.charges.minimumCommission`, charges.minimumCommission, inCurrency), taxRate: rate(`${field}.charges.taxRate`, charges.taxRate) },
        installments, executedMinor: [...installments.values()].reduce((sum, it) => sum + it.paidMinor, 0n),
      }];
    });
    const calendar = document.calendar === undefined ? {} : object('calendar', document.calendar);
    const weekend = calendar.weekend === undefined ? undefined : array('calendar.weekend', calendar.weekend).map((day, j) => (WEEKDAYS.includes(day) ? day : refuse(`calendar.weekend[${j}]`, `"${day}" is not a weekday name (SATURDAY)`)));
    const holidays = calendar.holidays === undefined ? undefined : array('calendar.holidays', calendar.holidays).map((day, j) => date(`calendar.holidays[${j}]`, day));
    if (document.businessDate !== undefined) date('businessDate', document.businessDate);
    // The calendar and the business date are a new core's only: afterwards the date moves by advances.
    if (this.loads === 0) {
      if (document.businessDate !== undefined) this.businessDate = document.businessDate;
      if (weekend) this.weekend = new Set(weekend);
      if (holidays) this.holidays = new Set(holidays);
    }
    this.loads += 1;
    const addMissing = (map, entries) => entries.filter(([key, value]) => !map.has(key) && map.set(key, value)).length;
    addMissing(this.users, users);
    addMissing(this.workstations, workstations);
    addMissing(this.customers, customers);
    addMissing(this.products, products);
    const accountsAdded = addMissing(this.accounts, accounts.map((account) => [account.number, account]));
    return { accountsAdded: accountsAdded + addMissing(this.facilities, facilities) };
  }

  // ----- End of day and events (docs/business-days.md) -----

  advance(to) {
    const report = { from: this.businessDate, to, daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 };
    for (let day = this.businessDate; epochDay(day) < epochDay(to); day = addDays(day, 1)) {
      if (!this.isBusinessDay(day)) continue;
      report.daysClosed.push(day);
      const maturing = [...this.deposits.values()].filter((d) => d.status === 'Active' && epochDay(d.maturityDate) <= epochDay(day));
      for (const deposit of maturing.sort((a, b) => epochDay(a.maturityDate) - epochDay(b.maturityDate))) {
        const { currency, principalMinor: principal, expectedInterestMinor: interest } = deposit;
        this.accounts.get(deposit.contractNumber).balance -= principal;
        this.accounts.get(deposit.contractNumber).status = 'Closed';
        this.accounts.get(deposit.sourceAccount).balance += principal;
        this.accounts.get(deposit.interestAccount).balance += interest;
        deposit.status = 'Matured';
        report.maturedDeposits += 1;
        this.event('termDeposit.matured', day, deposit.operationReference, {
          contractNumber: deposit.contractNumber, customerReference: deposit.customerReference, maturityDate: deposit.maturityDate, repaidOn: day,
          principal: { amount: formatMinor(principal, currency), currency }, interest: { amount: formatMinor(interest, currency), currency },
          sourceAccount: deposit.sourceAccount, interestAccount: deposit.interestAccount, status: 'Matured',
        });
      }
      for (const [loanId, facility] of this.facilities) {
        for (const [sequence, installment] of facility.installments) {
          if (installment.status !== 'Pending' || installment.paidMinor >= installment.amountMinor || epochDay(installment.dueDate) > epochDay(day)) continue;
          installment.status = 'Overdue';
          report.overdueInstallments += 1;
          const money = (minor) => ({ amount: formatMinor(minor, facility.currency), currency: facility.currency });
          this.event('loanInstallment.overdue', day, null, {
            loanId, sequence, dueDate: installment.dueDate, overdueOn: day, amount: money(installment.amountMinor), paid: money(installment.paidMinor),
            outstanding: money(installment.amountMinor - installment.paidMinor), status: 'Overdue',
          });
        }
      }
    }
    if (epochDay(to) > epochDay(this.businessDate)) this.businessDate = to;
    return report;
  }

  event(type, businessDate, operationReference, data) {
    this.events.push({ sequence: this.events.length + 1, id: randomUUID(), type, businessDate, operationReference, data });
  }

  eventsAfter(after, limit) {
    // The break `lose-event`: paging past an event skips the one after it.
    const from = this.broken === 'lose-event' && after > 0 ? after + 1 : after;
    return this.events.filter((event) => event.sequence > from).slice(0, limit);
  }
}
