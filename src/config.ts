/**
 * Run-time configuration (CONTRACT §10): command-line flags win over environment variables,
 * which win over defaults. Every value is checked here, once, with a message naming the setting.
 */
import { isCalendarDate } from './core/calendar-date.js';

export type Role = 'all' | 'auth' | 'api';

export interface Config {
  port: number;
  host: string;
  db: string;
  dataFile: string | undefined;
  publicUrl: string | undefined;
  businessDate: string | undefined;
  role: Role;
  logLevel: string;
  masterKey: string | undefined;
  /** How long SIGTERM waits for in-flight requests before closing connections. */
  shutdownGraceMs: number;
}

export const defaultDbUrl = 'sqlite:./data/coregate.db';

/** Flag values as commander gives them; every one optional. */
export interface ConfigFlags {
  port?: string;
  host?: string;
  db?: string;
  data?: string;
  publicUrl?: string;
  businessDate?: string;
  role?: string;
  logLevel?: string;
}

export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): Config {
  const port = integerSetting('--port / COREGATE_PORT', flags.port ?? env.COREGATE_PORT ?? '8080', 0, 65_535);
  const publicUrl = flags.publicUrl ?? env.COREGATE_PUBLIC_URL;
  if (publicUrl !== undefined && !/^https?:\/\/[^/]+(\/.*)?$/.test(publicUrl)) {
    throw new Error(`--public-url / COREGATE_PUBLIC_URL must be an http(s) URL, got "${publicUrl}"`);
  }
  const businessDate = flags.businessDate ?? env.COREGATE_BUSINESS_DATE;
  if (businessDate !== undefined && !isCalendarDate(businessDate)) {
    throw new Error(`--business-date / COREGATE_BUSINESS_DATE must be a YYYY-MM-DD calendar date, got "${businessDate}"`);
  }
  const role = flags.role ?? env.COREGATE_ROLE ?? 'all';
  if (role !== 'all' && role !== 'auth' && role !== 'api') {
    throw new Error(`--role / COREGATE_ROLE must be all, auth or api, got "${role}"`);
  }
  return {
    port,
    host: flags.host ?? env.COREGATE_HOST ?? 'localhost',
    db: flags.db ?? env.COREGATE_DB ?? defaultDbUrl,
    dataFile: flags.data ?? env.COREGATE_DATA,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    businessDate,
    role,
    logLevel: flags.logLevel ?? env.COREGATE_LOG_LEVEL ?? 'info',
    masterKey: env.COREGATE_MASTER_KEY,
    shutdownGraceMs: integerSetting('COREGATE_SHUTDOWN_GRACE_MS', env.COREGATE_SHUTDOWN_GRACE_MS ?? '10000', 0, 600_000),
  };
}

function integerSetting(name: string, value: string, min: number, max: number): number {
  if (!/^\d+$/.test(value)) throw new Error(`${name} must be an integer, got "${value}"`);
  const number = Number(value);
  if (number < min || number > max) throw new Error(`${name} must be between ${min} and ${max}, got ${number}`);
  return number;
}
