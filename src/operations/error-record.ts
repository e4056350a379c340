/**
 * The business API's error record (docs/errors.md, "The error record"). Operations keep the record
 * of a refusal as their outcome (a repeat, GET /v1/operations); src/api decides whether it is
 * wrapped.
 */
import { errorCode, type ErrorEntry, type Family } from '../core/error-catalogue.js';
import { reasonOf, statusReasons } from '../core/status-reasons.js';

/** The `reason` of each status the business API answers (docs/errors.md, "The error record"), from the one catalogue. */
export const reasonByStatus: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(statusReasons)
    .filter(([, status]) => status.businessApi)
    .map(([status, { reason }]) => [status, reason]),
);

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
  const record: ErrorRecord = { status: entry.status, reason: reasonOf(entry.status), message, path };
  if (family === undefined) return record;
  const applies = (candidate: ErrorEntry) => candidate.family === 'both' || candidate.family === family;
  const list = details && details.length > 0 ? details : [{ entry, message }];
  const errordetail = list.filter((detail) => applies(detail.entry)).map((detail) => ({ code: errorCode(detail.entry, family), reason: detail.entry.reason, message: detail.message }));
  if (applies(entry) && errordetail.length > 0) record.errordetail = errordetail;
  return record;
}

