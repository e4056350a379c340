/**
 * The refusals a core banking system may answer (docs/core-protocol.md, "Refusals": the first
 * table): the business rules a core decides — the reference core's rule modules and its fence —
 * and `rejectedByCore`, a refusal the core gives no rule for. The catalogue's other entries are the
 * API's own answers (a time-out, an outage, a token, a duplicate correlation id...): a core that
 * sends one of them as its refusal answers outside the protocol, and the API settles it as an
 * unrecognised refusal instead of mistaking it for its own (a "504" for an operation that is final).
 * test/docs/core-protocol-doc.test.ts keeps this list equal to what the reference core's rules refuse with.
 */
import type { ErrorName } from './error-catalogue.js';

export const coreRefusalNames: ReadonlySet<ErrorName> = new Set<ErrorName>([
  // Term deposits (src/core/term-deposits/constitution-rules.ts).
  'customerNotFound',
  'sourceAccountNotFound',
  'interestAccountNotFound',
  'customerBlocked',
  'productNotAvailable',
  'currencyNotOffered',
  'amountOutsideProductLimits',
  'termOutsideProductLimits',
  'accountNotActive',
  'accountNotCustomers',
  'currencyMismatchSource',
  'insufficientFundsSource',
  'valueDateNotBusinessDay',
  'valueDateBeforeBusinessDate',
  'maturityNotBusinessDay',
  'termMismatch',
  // Merchandising loans (src/core/loans/installment-rules.ts).
  'facilityNotFound',
  'installmentNotFound',
  'paymentAccountNotFound',
  'expenseAccountNotFound',
  'facilityClosed',
  'installmentPaid',
  'loanTypeMismatch',
  'parameterTypeMismatch',
  'parameterTypeNotSupported',
  'loanCurrencyMismatch',
  'amountAboveOutstanding',
  'approvedLimitExceeded',
  'insufficientFundsPayment',
  'insufficientFundsExpense',
  'loanAccountNotActive',
  'loanAccountNotCustomers',
  'maturityAfterFinalMaturity',
  // The fence (src/reference-core/reference-core.ts), and a refusal without a rule.
  'notExecuted',
  'rejectedByCore',
]);
