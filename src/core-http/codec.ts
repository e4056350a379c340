/**
 * Domain values ⇄ the remote core protocol's wire format (protocol.ts). Both sides use these
 * functions: the core server to read commands and write answers, the HTTP adapter to write
 * commands and read answers. Reading assumes the value passed the protocol's schema; what a schema
 * cannot say (an amount that is not strict minor units, days out of order) is a ProtocolViolation,
 * except in a refusal: a Rejected answer is the core's final word, so a refusal coregate cannot
 * name (a name the catalogue does not know, a code that is not that entry's) is still a refusal,
 * an UnrecognisedRefusal that says what did not map (docs/core-protocol.md, "What the API's
 * adapter makes of it").
 */
import { BusinessRefusal, errorCatalogue, errorCode, errorNameOf, isErrorName, type Family } from '../core/error-catalogue.js';
import { coreRefusalNames } from '../core/core-refusals.js';
import type {
  AccountRecord,
  CoreEvent,
  CoreOutcome,
  EndOfDayReport,
  LoanFacilityRecord,
  PostingRecord,
  TermDeposit,
  TermDepositRecord,
} from '../core/port.js';
import type {
  AccountWire,
  CoreEventWire,
  LoanFacilityWire,
  PostingWire,
  TermDepositRecordWire,
  EndOfDayReportWire,
  RefusalWire,
  TermDepositWire,
} from './protocol.js';
import { textLengthMax } from './protocol.js';

/**
 * The ways a core's answer can break the protocol, as the metrics count them
 * (coregate_core_protocol_violations_total{kind}): a bounded set, never a value from the answer.
 * - unknown_refusal, refusal_family_mismatch, refusal_code_mismatch: a Rejected answer whose
 *   refusal coregate cannot name (settled Rejected all the same: UnrecognisedRefusal);
 * - malformed_answer: not JSON, not UTF-8, too large, failing the schema, an amount that is not
 *   strict minor units;
 * - unexpected_status: an HTTP status the protocol does not answer there;
 * - foreign_answer: the answer of another question (a result of another reference, a record of
 *   another contract or account, a report of another date, events out of order).
 */
export const protocolViolationKinds = [
  'unknown_refusal',
  'refusal_family_mismatch',
  'refusal_code_mismatch',
  'malformed_answer',
  'unexpected_status',
  'foreign_answer',
] as const;
export type ProtocolViolationKind = (typeof protocolViolationKinds)[number];

/** A message that passed the schema but breaks the protocol's other rules (or failed the schema: `kind` says). */
export class ProtocolViolation extends Error {
  override name = 'ProtocolViolation';

  constructor(
    message: string,
    readonly kind: ProtocolViolationKind = 'malformed_answer',
    /** Where in the answer: a field's path (`/result/principalMinor`), `status`, `body`. */
    readonly field: string = 'body',
    /** What was there, bounded and without control characters (coreText); never a whole body. */
    readonly value: string | undefined = undefined,
  ) {
    super(message);
  }
}

/** Characters never quoted from a core: control characters, format characters (bidi overrides, zero-width), line and paragraph separators. */
const unquotable = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu;

/**
 * Text a core sent, made fit to quote to a client or in a log line: every run of control or
 * format characters becomes one space, and at most `charsMax` characters (code points, so a
 * surrogate pair is never cut) are kept, an ellipsis marking the cut.
 */
export function coreText(text: string, charsMax: number): string {
  const chars = Array.from(text.replace(unquotable, ' ').trim());
  return chars.length <= charsMax ? chars.join('') : `${chars.slice(0, Math.max(0, charsMax - 1)).join('')}…`;
}

/** Strict: digits only, no sign, no leading zero, no exponent, no blank (the schemas' patterns). */
export function minorFromWire(text: string): bigint {
  if (!/^(0|[1-9][0-9]{0,18})$/.test(text)) throw new ProtocolViolation(`"${coreText(text, 40)}" is not an amount in minor units`, 'malformed_answer', 'amount', coreText(text, 40));
  return BigInt(text);
}

export function minorToWire(minor: bigint): string {
  return minor.toString();
}

// ----- The term deposit contract: a constitution's result, and the retrieve's and the records' answer -----
// (each operation's own command and result codec is its folder's: src/operations/<operation>/wire.ts)

export function termDepositToWire(deposit: TermDeposit): TermDepositWire {
  return {
    contractNumber: deposit.contractNumber,
    customerReference: deposit.customerReference,
    productCode: deposit.productCode,
    componentCode: deposit.componentCode,
    principalMinor: minorToWire(deposit.principalMinor),
    currency: deposit.currency,
    ratePercent: deposit.ratePercent,
    dayCount: deposit.dayCount,
    valueDate: deposit.valueDate,
    maturityDate: deposit.maturityDate,
    numberOfDays: deposit.numberOfDays,
    sourceAccount: deposit.sourceAccount,
    interestAccount: deposit.interestAccount,
    description: deposit.description,
    operationReference: deposit.operationReference,
    status: deposit.status,
    expectedInterestMinor: minorToWire(deposit.expectedInterestMinor),
  };
}

export function termDepositFromWire(wire: TermDepositWire): TermDeposit {
  return {
    contractNumber: wire.contractNumber,
    customerReference: wire.customerReference,
    productCode: wire.productCode,
    componentCode: wire.componentCode,
    principalMinor: minorFromWire(wire.principalMinor),
    currency: wire.currency,
    ratePercent: wire.ratePercent,
    dayCount: wire.dayCount,
    valueDate: wire.valueDate,
    maturityDate: wire.maturityDate,
    numberOfDays: wire.numberOfDays,
    sourceAccount: wire.sourceAccount,
    interestAccount: wire.interestAccount,
    description: wire.description,
    operationReference: wire.operationReference,
    status: wire.status,
    expectedInterestMinor: minorFromWire(wire.expectedInterestMinor),
  };
}

// ----- Refusals and outcomes -----

export function refusalToWire(refusal: BusinessRefusal, family: Family): RefusalWire {
  return { name: errorNameOf(refusal.entry), code: errorCode(refusal.entry, family), message: refusal.message };
}

/** The most of a core's refusal message quoted in the client's message (the core's own may hold textLengthMax). */
export const coreRefusalQuotedCharsMax = 200;

/** Why a core's refusal could not be named. */
export type RefusalMismatch = Extract<ProtocolViolationKind, 'unknown_refusal' | 'refusal_family_mismatch' | 'refusal_code_mismatch'>;

/**
 * A core's refusal that coregate cannot name: still a refusal, since a Rejected answer is final
 * for its reference and nothing was posted, under the catalogue's unrecognisedCoreRefusal entry
 * (422), its message quoting the core's name, code and message (bounded, without control
 * characters). `kind`, `field` and `value` say what did not map, for the operator's log line and
 * metric (the adapter reports them); `value` is a refusal name or code, which the protocol's
 * schema restricts to letters, digits and dashes.
 */
export class UnrecognisedRefusal extends BusinessRefusal {
  constructor(
    readonly kind: RefusalMismatch,
    readonly field: 'refusal.name' | 'refusal.code',
    readonly value: string,
    readonly wire: RefusalWire,
    why: string,
  ) {
    super(
      errorCatalogue.unrecognisedCoreRefusal,
      `The core refused the operation: "${coreText(wire.message, coreRefusalQuotedCharsMax)}" (its refusal ${wire.name} ${wire.code} is not one coregate can name: ${why})`,
    );
    this.name = 'UnrecognisedRefusal';
  }
}

/**
 * The catalogue entry the name names, its code the one the wire carries; otherwise an
 * UnrecognisedRefusal saying which field did not map: the name (not in the catalogue, or of the
 * other family) or the code (of the other family, or another entry's).
 */
export function refusalFromWire(wire: RefusalWire, family: Family): BusinessRefusal {
  if (!isErrorName(wire.name)) return new UnrecognisedRefusal('unknown_refusal', 'refusal.name', wire.name, wire, `${wire.name} is not in the error catalogue`);
  // The API's own answers (a time-out, an outage, a token...) are never a core's refusal.
  if (!coreRefusalNames.has(wire.name)) return new UnrecognisedRefusal('unknown_refusal', 'refusal.name', wire.name, wire, `${wire.name} is one of the API's own answers, not a refusal a core decides`);
  const entry = errorCatalogue[wire.name];
  if (entry.family !== 'both' && entry.family !== family) {
    return new UnrecognisedRefusal('refusal_family_mismatch', 'refusal.name', wire.name, wire, `${wire.name} is not a ${family} refusal`);
  }
  if (!wire.code.startsWith(`${family}-`)) return new UnrecognisedRefusal('refusal_family_mismatch', 'refusal.code', wire.code, wire, `${wire.code} is not a ${family} code`);
  const expected = errorCode(entry, family);
  if (expected !== wire.code) return new UnrecognisedRefusal('refusal_code_mismatch', 'refusal.code', wire.code, wire, `the code of ${wire.name} is ${expected}`);
  return new BusinessRefusal(entry, coreText(wire.message, textLengthMax));
}

export type OutcomeWire<W> = { status: 'Executed'; result: W } | { status: 'Rejected'; refusal: RefusalWire };

export function outcomeToWire<T, W>(outcome: CoreOutcome<T>, family: Family, resultToWire: (result: T) => W): OutcomeWire<W> {
  return outcome.status === 'Executed'
    ? { status: 'Executed', result: resultToWire(outcome.result) }
    : { status: 'Rejected', refusal: refusalToWire(outcome.refusal, family) };
}

export function outcomeFromWire<T, W>(wire: OutcomeWire<W>, family: Family, resultFromWire: (wire: W) => T): CoreOutcome<T> {
  return wire.status === 'Executed'
    ? { status: 'Executed', result: resultFromWire(wire.result) }
    : { status: 'Rejected', refusal: refusalFromWire(wire.refusal, family) };
}

// ----- Business days and events -----

export function reportToWire(report: EndOfDayReport): EndOfDayReportWire {
  return { from: report.from, to: report.to, daysClosed: [...report.daysClosed], maturedDeposits: report.maturedDeposits, overdueInstallments: report.overdueInstallments };
}

/** The report of an advance to `to`: one for another date, or days out of order, breaks the protocol. */
export function reportFromWire(wire: EndOfDayReportWire, to: string): EndOfDayReport {
  if (wire.to !== to) throw new ProtocolViolation(`asked to advance to ${to}, got the report of ${wire.to}`, 'foreign_answer', 'to', wire.to);
  const days = wire.daysClosed;
  if (days.some((day, index) => day < wire.from || day >= wire.to || (index > 0 && day <= (days[index - 1] ?? '')))) {
    throw new ProtocolViolation('the days closed are not in order between from and to', 'malformed_answer', 'daysClosed');
  }
  return reportToWire(wire);
}

export function eventToWire(event: CoreEvent): CoreEventWire {
  return { ...event, data: { ...event.data } };
}

/** Events in strictly increasing sequence after `after`; anything else breaks the protocol. */
export function eventsFromWire(wire: readonly CoreEventWire[], after: number, limit: number): CoreEvent[] {
  if (wire.length > limit) throw new ProtocolViolation(`asked for at most ${limit} events, got ${wire.length}`, 'foreign_answer', 'events', String(wire.length));
  let previous = after;
  for (const event of wire) {
    if (event.sequence <= previous) throw new ProtocolViolation(`event sequence ${event.sequence} does not follow ${previous}`, 'foreign_answer', 'events[].sequence', String(event.sequence));
    previous = event.sequence;
  }
  return wire.map((event) => ({ ...event, data: { ...event.data } }));
}

// ----- The read side for operators -----

/** Strict, with a sign: balances and postings may be negative (internal accounts, debits). */
export function signedMinorFromWire(text: string): bigint {
  if (!/^(0|-?[1-9][0-9]{0,18})$/.test(text)) throw new ProtocolViolation(`"${coreText(text, 40)}" is not a signed amount in minor units`, 'malformed_answer', 'amount', coreText(text, 40));
  return BigInt(text);
}

export function accountToWire(account: AccountRecord): AccountWire {
  return { ...account, balanceMinor: minorToWire(account.balanceMinor) };
}

export function accountFromWire(wire: AccountWire): AccountRecord {
  return {
    accountNumber: wire.accountNumber,
    customerReference: wire.customerReference,
    kind: wire.kind,
    status: wire.status,
    currency: wire.currency,
    balanceMinor: signedMinorFromWire(wire.balanceMinor),
    createdAt: wire.createdAt,
  };
}

export function postingToWire(posting: PostingRecord): PostingWire {
  return { ...posting, amountMinor: minorToWire(posting.amountMinor), balanceAfterMinor: minorToWire(posting.balanceAfterMinor) };
}

export function postingFromWire(wire: PostingWire): PostingRecord {
  return {
    movementId: wire.movementId,
    line: wire.line,
    reference: wire.reference,
    kind: wire.kind,
    description: wire.description,
    businessDate: wire.businessDate,
    createdAt: wire.createdAt,
    amountMinor: signedMinorFromWire(wire.amountMinor),
    balanceAfterMinor: signedMinorFromWire(wire.balanceAfterMinor),
    currency: wire.currency,
  };
}

export function termDepositRecordToWire(deposit: TermDepositRecord): TermDepositRecordWire {
  return { ...termDepositToWire(deposit), createdAt: deposit.createdAt };
}

export function termDepositRecordFromWire(wire: TermDepositRecordWire): TermDepositRecord {
  return { ...termDepositFromWire(wire), createdAt: wire.createdAt };
}

export function loanFacilityToWire(facility: LoanFacilityRecord): LoanFacilityWire {
  return {
    ...facility,
    approvedLimitMinor: minorToWire(facility.approvedLimitMinor),
    executedTotalMinor: minorToWire(facility.executedTotalMinor),
    installments: facility.installments.map((installment) => ({ ...installment, amountMinor: minorToWire(installment.amountMinor), paidMinor: minorToWire(installment.paidMinor) })),
  };
}

export function loanFacilityFromWire(wire: LoanFacilityWire): LoanFacilityRecord {
  return {
    loanId: wire.loanId,
    customerReference: wire.customerReference,
    loanType: wire.loanType,
    parameterType: wire.parameterType,
    status: wire.status,
    finalMaturityDate: wire.finalMaturityDate,
    currency: wire.currency,
    approvedLimitMinor: minorFromWire(wire.approvedLimitMinor),
    executedTotalMinor: minorFromWire(wire.executedTotalMinor),
    installments: wire.installments.map((installment) => ({
      sequence: installment.sequence,
      dueDate: installment.dueDate,
      amountMinor: minorFromWire(installment.amountMinor),
      paidMinor: minorFromWire(installment.paidMinor),
      status: installment.status,
    })),
  };
}
