/**
 * The conformance kit (docs/conformance.md): every rule of the port (docs/core-port.md) checked
 * against a live core. `runCoreConformance(port, options)` runs them on any CoreBankingPort — an
 * in-process TypeScript adapter as it is, or a remote core through HttpCore (`coregate core
 * conformance --core-url URL` builds that one, behind a recording proxy) — and answers one result
 * per rule: passed, failed with the request and the answer that broke it, or skipped and why.
 *
 * It needs no reset: it loads records of its own through the core's load side, under identifiers
 * no earlier run used, or runs on the records a fixture file names. It moves the core's business
 * date only when asked (`advance`).
 */
import { randomUUID } from 'node:crypto';
import { systemClock } from '../clock/system-clock.js';
import type { Weekday } from '../core/business-calendar.js';
import { addDays } from '../core/calendar-date.js';
import type { Clock } from '../core/clock.js';
import { errorCatalogue as E, type ErrorEntry } from '../core/error-catalogue.js';
import { CoreDataRefused, CoreSideNotServed, hasDataLoad, hasRecords, type CoreBankingPort, type CoreDataDocument, type CoreRecords } from '../core/port.js';
import { recordPaths } from '../core-http/protocol.js';
import { lastEventSequence } from './business-day-rules.js';
import { describeOutcome } from './checks.js';
import { ConformanceContext } from './conformance-context.js';
import { ConformanceSetupError, RuleFailure, RuleSkipped } from './conformance-errors.js';
import { namedAccounts, type ConformanceFixtures } from './conformance-fixtures.js';
import type { ConformanceRule } from './conformance-rule.js';
import { conformanceRules } from './conformance-rules.js';
import { describeWeekend, learnWeekend, usualWeekend, type CoreWeekend } from './core-weekend.js';
import { describeError, ExchangeLog, recordedPort, type Exchange } from './exchange-log.js';
import { fixtureSuffix, kitFixtures } from './kit-fixtures.js';
import { WireClient } from './wire-client.js';

export interface ConformanceOptions {
  /** The records to run on, as a fixture file names them (readFixtureFile); absent: the kit loads its own through the core's load side. */
  fixtures?: ConformanceFixtures | undefined;
  /** Where the fixtures came from, for messages (a file's name). */
  fixturesName?: string | undefined;
  /** The core's weekend days (`--weekend`); absent: the fixture file's, else learned from the core's refusals (docs/conformance.md, "The weekend"). */
  weekend?: readonly Weekday[] | undefined;
  /** Run end of day, which moves the core's business date: it cannot be moved back. */
  advance?: boolean | undefined;
  /** The core's URL: the rules sent as plain HTTP (malformed commands) run against it; absent for an in-process adapter. */
  coreUrl?: string | undefined;
  /** Where the exchanges are written; a recording proxy in front of the adapter writes the wire's into it. */
  exchanges?: ExchangeLog | undefined;
  /** Record the port's calls and answers (default: true; false when a recording proxy records the wire). */
  recordPortCalls?: boolean | undefined;
  /** Times each rule and each plain HTTP request's time-out (src/core/clock.ts): the system's by default. */
  clock?: Clock | undefined;
  /** The time-out of a plain HTTP request (default 10 s). */
  timeoutMs?: number | undefined;
  /** Only these rules (their ids); all by default. */
  only?: readonly string[] | undefined;
  /** Told once the kit is ready to run its first rule: what it runs on (the CLI prints it as its first line). */
  onReady?: ((start: ConformanceStart) => void) | undefined;
  /** Told of each rule's result as it ends (the CLI prints a line). */
  onResult?: ((result: RuleResult) => void) | undefined;
}

/** What a run stands on, once set up: the core's date, the first value date it accepted, its weekend, the fixtures. */
export interface ConformanceStart {
  businessDate: string;
  valueDate: string;
  fixtures: 'loaded' | 'file';
  /** The fixtures' customer. */
  customer: string;
  /** The weekend and how the kit came to it: `weekend Saturday, Sunday (learned from the core's refusals)`. */
  weekend: string;
  /** The last event the core held when the kit started: events are read after it. */
  eventsFrom: number;
}

export interface RuleResult {
  id: string;
  title: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Why it failed, or why it was skipped. */
  message?: string | undefined;
  /** What the rule could not verify against this core, or said beside its result. */
  notes: string[];
  /** A failure's last exchanges with the core: the request and the answer that broke it. */
  exchanges: Exchange[];
  durationMs: number;
}

export interface ConformanceReport {
  businessDate: string;
  valueDate: string;
  fixtures: 'loaded' | 'file';
  results: RuleResult[];
  passed: number;
  failed: number;
  skipped: number;
}

/** A failure shows this many of its last exchanges. */
const failureExchangesShown = 2;
/** Dates tried from the business date on for a value date the core accepts. */
const valueDateTriesMax = 14;
const defaultTimeoutMs = 10_000;

/** A prepared run: the context the rules share, and one rule at a time (the node:test suites run each as a test). */
export interface ConformanceRun {
  readonly context: ConformanceContext;
  readonly start: ConformanceStart;
  readonly rules: readonly ConformanceRule[];
  runRule(rule: ConformanceRule): Promise<RuleResult>;
}

export async function runCoreConformance(port: CoreBankingPort, options: ConformanceOptions = {}): Promise<ConformanceReport> {
  const run = await prepareConformance(port, options);
  options.onReady?.(run.start);
  const results: RuleResult[] = [];
  for (const rule of run.rules) {
    const result = await run.runRule(rule);
    results.push(result);
    options.onResult?.(result);
  }
  return reportOf(run.context, results);
}

/** The results of a run, counted. */
export function reportOf(context: ConformanceContext, results: RuleResult[]): ConformanceReport {
  const count = (status: RuleResult['status']) => results.filter((result) => result.status === status).length;
  return {
    businessDate: context.businessDate,
    valueDate: context.valueDate,
    fixtures: context.fixtures.origin,
    results,
    passed: count('passed'),
    failed: count('failed'),
    skipped: count('skipped'),
  };
}

/**
 * Everything before the first rule: the core answers, its business date, its last event, the
 * fixtures (loaded, or checked against the read side), its weekend, and a value date it accepts.
 * Throws ConformanceSetupError, one line saying what to do, when the kit cannot start.
 */
export async function prepareConformance(port: CoreBankingPort, options: ConformanceOptions = {}): Promise<ConformanceRun> {
  const exchanges = options.exchanges ?? new ExchangeLog();
  const clock = options.clock ?? systemClock;
  const only = options.only;
  if (only) {
    const unknown = only.filter((id) => !conformanceRules.some((rule) => rule.id === id));
    if (unknown.length > 0) throw new ConformanceSetupError(`no rule ${unknown.join(', ')}: the rules are ${conformanceRules.map((rule) => rule.id).join(', ')}`);
  }
  const subject = options.recordPortCalls === false ? port : recordedPort(port, exchanges);
  const step = async <T>(what: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof ConformanceSetupError) throw error;
      throw new ConformanceSetupError(`${what}: ${describeError(error)}`, { cause: error });
    }
  };
  await step('the core does not answer its readiness probe (GET /health/ready)', () => subject.ping());
  const businessDate = await step('the core does not answer its business date (GET /core/v1/business-date)', () => subject.businessDate());
  // Remembered before the kit does anything: its rules read only the events written after it.
  const eventsFrom = await step('the core does not answer its events (GET /core/v1/events)', () => lastEventSequence(subject));

  let fixtures = options.fixtures;
  let loaded: CoreDataDocument | undefined;
  const dataLoad = hasDataLoad(subject) ? subject : undefined;
  if (!fixtures) {
    if (!dataLoad) throw new ConformanceSetupError('the core has no load side (loadData): give fixtures naming records it holds (docs/conformance.md, "Fixtures")');
    const kit = kitFixtures(fixtureSuffix(), businessDate);
    try {
      await dataLoad.loadData(kit.document);
    } catch (error) {
      if (error instanceof CoreSideNotServed) {
        throw new ConformanceSetupError(
          `the core does not serve the load side (POST ${recordPaths.data} answered 404 NO_ROUTE), so the kit cannot load its own records: give --fixtures FILE naming the test customer, accounts, product and facility the core holds (docs/conformance.md, "Fixtures")`,
        );
      }
      if (error instanceof CoreDataRefused) throw new ConformanceSetupError(`the core refused the kit's fixtures (POST ${recordPaths.data}) at ${error.field}: ${error.message}`);
      throw new ConformanceSetupError(`loading the kit's fixtures failed (POST ${recordPaths.data}): ${describeError(error)}`, { cause: error });
    }
    fixtures = kit.fixtures;
    loaded = kit.document;
  }
  const named = options.fixturesName ?? 'the fixtures';
  const records = await step('reading the fixtures\' accounts', () => readSide(subject, fixtures, named));
  const wire = options.coreUrl === undefined ? undefined : new WireClient(options.coreUrl, exchanges, clock, options.timeoutMs ?? defaultTimeoutMs);
  const weekend = await step('learning the core\'s weekend', () => coreWeekend(subject, fixtures, businessDate, options.weekend, named));
  const parts = { port: subject, records, dataLoad: loaded ? dataLoad : undefined, fixtures, loaded, businessDate, weekend, eventsFrom, advance: options.advance ?? false, wire };
  const probe = new ConformanceContext({ ...parts, valueDate: businessDate });
  const valueDate = await step('finding a value date the core accepts', () => firstValueDate(probe, named));
  const context = new ConformanceContext({ ...parts, valueDate });
  const rules = only ? conformanceRules.filter((rule) => only.includes(rule.id)) : conformanceRules;

  return {
    context,
    start: { businessDate, valueDate, fixtures: fixtures.origin, customer: fixtures.customer, weekend: describeWeekend(weekend), eventsFrom },
    rules,
    async runRule(rule) {
      const mark = exchanges.mark();
      const started = clock.now();
      context.takeNotes();
      let status: RuleResult['status'] = 'passed';
      let message: string | undefined;
      try {
        await rule.run(context);
      } catch (error) {
        if (error instanceof RuleSkipped) {
          status = 'skipped';
          message = error.message;
        } else {
          status = 'failed';
          // A broken rule says what it expected; anything else (an answer outside the protocol, a time-out) is the error itself.
          message = error instanceof RuleFailure ? error.message : describeError(error);
        }
      }
      return {
        id: rule.id,
        title: rule.title,
        status,
        message,
        notes: context.takeNotes(),
        exchanges: status === 'failed' ? exchanges.since(mark, failureExchangesShown) : [],
        durationMs: clock.now() - started,
      };
    },
  };
}

/** The read side when the core serves it (answers for the fixtures' source account), else undefined; a fixture file's accounts must all exist. */
async function readSide(port: CoreBankingPort, fixtures: ConformanceFixtures, named: string): Promise<CoreRecords | undefined> {
  if (!hasRecords(port)) return undefined;
  try {
    await port.findAccount(fixtures.accounts.source);
  } catch (error) {
    if (error instanceof CoreSideNotServed) return undefined;
    throw error;
  }
  if (fixtures.origin === 'file') {
    for (const [field, account] of namedAccounts(fixtures)) {
      if ((await port.findAccount(account)) === undefined) {
        throw new ConformanceSetupError(`${named}: ${field} names account ${account}, which the core does not hold (GET ${recordPaths.account.replace(':accountNumber', account)} answered 404 NotFound)`);
      }
    }
  }
  return port;
}

/**
 * The weekend the rules assume: given (`--weekend`, then the fixture file's), else learned from
 * the core's refusals of deposits from the account that cannot pay; assumed Saturday and Sunday,
 * saying why, when neither is possible.
 */
async function coreWeekend(port: CoreBankingPort, fixtures: ConformanceFixtures, businessDate: string, given: readonly Weekday[] | undefined, named: string): Promise<CoreWeekend> {
  if (given) return { days: [...given], holidays: [], source: '--weekend' };
  if (fixtures.weekend) return { days: fixtures.weekend, holidays: [], source: `${named}'s weekend` };
  const assumed = (why: string): CoreWeekend => ({ days: [...usualWeekend], holidays: [], source: `assumed: ${why}; --weekend gives it` });
  const { insufficient } = fixtures.accounts;
  if (!insufficient) return assumed('the fixtures name no accounts.insufficient to learn it with');
  const template = new ConformanceContext({ port, records: undefined, dataLoad: undefined, fixtures, loaded: undefined, businessDate, valueDate: businessDate, weekend: { days: [...usualWeekend], holidays: [], source: 'being learned' }, eventsFrom: 0, advance: false, wire: undefined });
  const learned = await learnWeekend(port, businessDate, (valueDate) => template.deposit({ valueDate, sourceAccount: insufficient.account, principalMinor: insufficient.amountMinor }));
  if ('unexpected' in learned) {
    const field = learned.unexpected.status === 'Rejected' ? fixtureHints.get(learned.unexpected.refusal.entry) : 'accounts.insufficient (it holds that much)';
    throw new ConformanceSetupError(
      `learning the core's weekend: a deposit of ${named}'s accounts.insufficient (value date ${learned.valueDate}), which only insufficientFundsSource or a date refusal may answer, answered ${describeOutcome(learned.unexpected, 'TD')}${field ? `: check ${field}` : ''}; --weekend gives the weekend without learning it`,
    );
  }
  if (!learned.learned) return assumed(learned.why);
  return { days: learned.days, holidays: learned.holidays, source: 'learned from the core\'s refusals' };
}

/** What a refusal of the first deposit says about the fixtures. */
const fixtureHints = new Map<ErrorEntry, string>([
  [E.customerNotFound, 'customer'],
  [E.sourceAccountNotFound, 'accounts.source'],
  [E.interestAccountNotFound, 'accounts.interest'],
  [E.productNotAvailable, 'product'],
  [E.currencyNotOffered, 'product.currencies'],
  [E.amountOutsideProductLimits, 'product.minAmount and maxAmount'],
  [E.insufficientFundsSource, 'accounts.source (its balance)'],
  [E.accountNotActive, 'accounts.source or accounts.interest (not Active)'],
  [E.customerBlocked, 'customer (not Active)'],
]);

/** The first date from the business date on, known non-business days left out, on which the core executes a valid deposit. */
async function firstValueDate(context: ConformanceContext, named: string): Promise<string> {
  for (let step = 0; step < valueDateTriesMax; step += 1) {
    const candidate = addDays(context.businessDate, step);
    if (!context.isBusinessDay(candidate)) continue;
    const outcome = await context.port.constituteTermDeposit(randomUUID(), context.deposit({ valueDate: candidate }));
    if (outcome.status === 'Executed') return candidate;
    if (outcome.status === 'Rejected' && outcome.refusal.entry === E.valueDateNotBusinessDay) continue;
    const field = outcome.status === 'Rejected' ? fixtureHints.get(outcome.refusal.entry) : undefined;
    throw new ConformanceSetupError(
      `a valid term deposit of ${named} (value date ${candidate}) was not executed: ${describeOutcome(outcome, 'TD')}${field ? `: check ${field}` : ''}`,
    );
  }
  throw new ConformanceSetupError(`the core refused every value date from its business date ${context.businessDate} to ${addDays(context.businessDate, valueDateTriesMax - 1)} as not a business day`);
}
