/**
 * `import ... from 'coregate'`: embedding the service, or plugging a bank's own core in through
 * the port. Business applications use `coregate/sdk` instead.
 */
export { startCoregate, type Coregate, type StartOptions } from './main.js';
export { resolveConfig, type Config, type ConfigFlags } from './config.js';
export { CoreUnavailable, type CoreBankingPort, type UnitOfWork, type TermDeposit, type LoanInstallmentResult } from './core/port.js';
export { ReferenceCore } from './core/reference-core.js';
export { BusinessRefusal, errorCatalogue, allErrorCodes } from './core/error-catalogue.js';
