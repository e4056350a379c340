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

export function errorRecord(entry: ErrorEntry, message: string, path: string, family: Family | undefined): ErrorRecord {
  const record: ErrorRecord = { status: entry.status, reason: reasonByStatus[entry.status] ?? 'INTERNAL_ERROR', message, path };
  const applies = family !== undefined && (entry.family === 'both' || entry.family === family);
  if (applies) record.errordetail = [{ code: errorCode(entry, family), reason: entry.reason, message }];
  return record;
}

