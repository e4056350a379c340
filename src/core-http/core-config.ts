/**
 * Configuration of `coregate core serve` (the reference core as its own HTTP service): flags win
 * over environment variables, which win over defaults. The core has its own database and its own
 * data file, so its settings have names of their own (COREGATE_CORE_...).
 */
import { integerSetting } from '../config.js';
import { isCalendarDate } from '../core/calendar-date.js';

export interface CoreServiceConfig {
  port: number;
  host: string;
  db: string;
  dataFile: string | undefined;
  businessDate: string | undefined;
  logLevel: string;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
}

export interface CoreServiceFlags {
  port?: string;
  host?: string;
  db?: string;
  data?: string;
  businessDate?: string;
  logLevel?: string;
}

export const defaultCorePort = '8081';
export const defaultCoreDbUrl = 'sqlite:./data/core.db';

export function resolveCoreServiceConfig(flags: CoreServiceFlags, env: NodeJS.ProcessEnv = process.env): CoreServiceConfig {
  const db = flags.db ?? env.COREGATE_CORE_DB ?? defaultCoreDbUrl;
  if (!/^(sqlite:.+|postgres(ql)?:\/\/.+)$/.test(db)) {
    throw new Error(`--db / COREGATE_CORE_DB must be sqlite:PATH or postgres://..., got "${db.replace(/\/\/[^@/]*@/, '//***@')}"`);
  }
  const businessDate = flags.businessDate ?? env.COREGATE_CORE_BUSINESS_DATE;
  if (businessDate !== undefined && !isCalendarDate(businessDate)) {
    throw new Error(`--business-date / COREGATE_CORE_BUSINESS_DATE must be a YYYY-MM-DD calendar date, got "${businessDate}"`);
  }
  return {
    port: integerSetting('--port / COREGATE_CORE_PORT', flags.port ?? env.COREGATE_CORE_PORT ?? defaultCorePort, 0, 65_535),
    host: flags.host ?? env.COREGATE_CORE_HOST ?? 'localhost',
    db,
    dataFile: flags.data ?? env.COREGATE_CORE_DATA,
    businessDate,
    logLevel: flags.logLevel ?? env.COREGATE_LOG_LEVEL ?? 'info',
    shutdownGraceMs: integerSetting('COREGATE_SHUTDOWN_GRACE_MS', env.COREGATE_SHUTDOWN_GRACE_MS ?? '10000', 0, 600_000),
  };
}
