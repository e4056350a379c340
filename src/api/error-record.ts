/**
 * The business API's error record (SPEC: Errors; CONTRACT §5): top-level for term deposits and
 * everything outside the loan operation, wrapped in `{"error": ...}` for the loan operation.
 */
import { errorCode, type ErrorEntry, type Family } from '../core/error-catalogue.js';

export const reasonByStatus: Readonly<Record<number, string>> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'BUSINESS_RULE_VIOLATION',
  429: 'TOO_MANY_REQUESTS',
  500: 'INTERNAL_ERROR',
  502: 'CORE_UNAVAILABLE',
  504: 'CORE_TIMEOUT',
};

export interface ErrorDetail {
  code: string;
  reason: string;
  message: string;
}

export interface ErrorRecord {
  status: number;
  reason: string;
  message: string;
  path: string;
  errordetail?: ErrorDetail[];
}

/** How a route presents its errors: the code family, and whether the record is wrapped. */
export interface ErrorStyle {
  family: Family | undefined;
  wrapped: boolean;
}

/** A refusal on its way to the client, with the catalogue entry that names it. */
export class ApiError extends Error {
  constructor(
    readonly entry: ErrorEntry,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorRecord(entry: ErrorEntry, message: string, path: string, family: Family | undefined): ErrorRecord {
  const record: ErrorRecord = { status: entry.status, reason: reasonByStatus[entry.status] ?? 'INTERNAL_ERROR', message, path };
  const applies = family !== undefined && (entry.family === 'both' || entry.family === family);
  if (applies) record.errordetail = [{ code: errorCode(entry, family), reason: entry.reason, message }];
  return record;
}

export function errorBody(record: ErrorRecord, style: ErrorStyle): ErrorRecord | { error: ErrorRecord } {
  return style.wrapped ? { error: record } : record;
}
