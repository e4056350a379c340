/**
 * The business API's error record (SPEC: Errors; CONTRACT §5). Operations keep the record of a
 * refusal as their outcome (a repeat, GET /v1/operations); src/api decides whether it is wrapped.
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
  503: 'SERVICE_UNAVAILABLE',
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

/**
 * The record of a refusal. `details` lists every problem when there were several (a request's
 * validation); the record's own status and message are the first one's.
 */
export function errorRecord(
  entry: ErrorEntry,
  message: string,
  path: string,
  family: Family | undefined,
  details?: ReadonlyArray<{ entry: ErrorEntry; message: string }>,
): ErrorRecord {
  const record: ErrorRecord = { status: entry.status, reason: reasonByStatus[entry.status] ?? 'INTERNAL_ERROR', message, path };
  if (family === undefined) return record;
  const applies = (candidate: ErrorEntry) => candidate.family === 'both' || candidate.family === family;
  const list = details && details.length > 0 ? details : [{ entry, message }];
  const errordetail = list.filter((detail) => applies(detail.entry)).map((detail) => ({ code: errorCode(detail.entry, family), reason: detail.entry.reason, message: detail.message }));
  if (applies(entry) && errordetail.length > 0) record.errordetail = errordetail;
  return record;
}

