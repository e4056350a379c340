/**
 * `import ... from 'coregate'`: embedding the service, or plugging a bank's own core in through
 * the port. Business applications use `coregate/sdk` instead.
 */
export { startCoregate, type Coregate, type StartOptions } from './main.js';
export { resolveConfig, type Config, type ConfigFlags } from './config.js';
export {
  BusinessDateBackwards,
  CoreDataRefused,
  CoreTimeout,
  CoreUnavailable,
  isTransactional,
  type CoreBankingPort,
  type CoreDataDocument,
  type CoreDataLoad,
  type CoreEvent,
  type CoreLoadSummary,
  type CoreLookup,
  type CoreOutcome,
  type CoreRecords,
  type DirectoryStatus,
  type EndOfDayReport,
  type LoanInstallmentResult,
  type TermDeposit,
  type TransactionalCore,
} from './core/port.js';
export type { UnitOfWork } from './core/unit-of-work.js';
export type { TermDepositInitiation } from './core/term-deposits/initiation.js';
export type { LoanInstallmentExecution } from './core/loans/execution-request.js';
export { ReferenceCore } from './reference-core/reference-core.js';
export { HttpCore, type HttpCoreOptions } from './core-http/http-core-adapter.js';
export type { CircuitState } from './core-http/circuit-breaker.js';
export { buildCoreServer, type CoreServerOptions } from './core-http/core-server.js';
export { BusinessRefusal, errorCatalogue, allErrorCodes } from './core/error-catalogue.js';
// The conformance kit (docs/conformance.md): every rule of the port, against an in-process adapter.
export { runCoreConformance, type ConformanceOptions, type ConformanceReport, type ConformanceStart, type RuleResult } from './conformance/run-core-conformance.js';
export { readFixtureFile, type ConformanceFixtures } from './conformance/conformance-fixtures.js';
export { conformanceRuleIds } from './conformance/conformance-rules.js';
export { describeResult as describeConformanceResult, describeTotals as describeConformanceTotals, junitReport as conformanceJunitReport, tapReport as conformanceTapReport } from './conformance/conformance-report.js';
export { ConformanceSetupError } from './conformance/conformance-errors.js';
