/**
 * The port's conformance rules as node:test suites: the rules of the conformance kit
 * (src/conformance, docs/conformance.md — the same ones `coregate core conformance` runs against a
 * bank's core), one test per rule, against a port the setup gives. coregate runs them against the
 * embedded reference core (embedded-core.test.ts) and against HttpCore in front of a core server
 * (http-core.test.ts), on each store, with end of day (`advance`): their cores are the suites' own.
 *
 * `deposit` and `conformanceDataFile` are the demo data's valid initiation and file, which other
 * suites share.
 */
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { describeResult } from '../../src/conformance/conformance-report.js';
import { conformanceRules } from '../../src/conformance/conformance-rules.js';
import { prepareConformance, type ConformanceRun } from '../../src/conformance/run-core-conformance.js';
import type { CoreBankingPort } from '../../src/core/port.js';
import type { TermDepositInitiation } from '../../src/core/term-deposits/initiation.js';
import { repoRoot } from '../helpers/repo-root.js';

/** The demo data (customers, accounts, products, the loan facility, business date 2026-03-02). */
export const conformanceDataFile = join(repoRoot, 'demo/sandbox.json');

/** A valid initiation of the demo data's customer; the HTTP adapter's tests share it. */
export function deposit(terms: Partial<TermDepositInitiation> = {}): TermDepositInitiation {
  return {
    customerReference: 'C0001',
    productCode: 'TDFIX',
    componentCode: 'TD30-365',
    principalMinor: 100_000n,
    currency: 'USD',
    ratePercent: '5.25',
    numberOfDays: 90,
    maturityDate: undefined,
    valueDate: '2026-03-02',
    sourceAccount: '1000000001',
    interestAccount: '1000000002',
    description: 'conformance suite',
    ...terms,
  };
}

export interface PortUnderTest {
  port: CoreBankingPort;
  /** The core's URL when it is served over HTTP: the rules sent as plain HTTP run against it. */
  coreUrl?: string;
  close(): Promise<void>;
}

export interface ConformanceSuiteOptions {
  skip?: string | undefined;
  /** The rules this core may skip, with a word on why: any other skip fails its test. */
  skipped?: Readonly<Record<string, string>>;
}

export function describeCoreConformance(name: string, setup: () => Promise<PortUnderTest>, options: ConformanceSuiteOptions = {}): void {
  describe(`core conformance kit: ${name}`, { skip: options.skip }, () => {
    let subject: PortUnderTest | undefined;
    let run: ConformanceRun | undefined;
    before(async () => {
      subject = await setup();
      run = await prepareConformance(subject.port, { advance: true, coreUrl: subject.coreUrl });
    });
    after(async () => {
      await subject?.close();
    });
    for (const rule of conformanceRules) {
      test(`${rule.id}: ${rule.title}`, async (t) => {
        if (!run) throw new Error('the conformance run was not prepared');
        const result = await run.runRule(rule);
        if (result.status === 'failed') throw new Error(describeResult(result));
        if (result.status === 'skipped') {
          if (options.skipped?.[rule.id] === undefined) throw new Error(`skipped, which this core must not be: ${result.message}`);
          t.skip(result.message);
        } else if (options.skipped?.[rule.id] !== undefined) {
          throw new Error(`expected to be skipped (${options.skipped[rule.id]}), but it ran`);
        }
      });
    }
  });
}
