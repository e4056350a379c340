/**
 * The business API's error record on the wire (docs/errors.md, "The error record"): top-level for
 * term deposits and everything outside the loan operation, wrapped in `{"error": ...}` for the loan
 * operation.
 */
import type { ErrorEntry, Family } from '../core/error-catalogue.js';
import { ExpectedError } from '../core/expected-error.js';
import type { ErrorRecord } from '../operations/error-record.js';

export { errorRecord, reasonByStatus, type ErrorDetail, type ErrorRecord } from '../operations/error-record.js';

/** How a route presents its errors: the code family, and whether the record is wrapped. */
export interface ErrorStyle {
  family: Family | undefined;
  wrapped: boolean;
}

/** A refusal on its way to the client, with the catalogue entry that names it. */
export class ApiError extends ExpectedError {
  constructor(
    readonly entry: ErrorEntry,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorBody(record: ErrorRecord, style: ErrorStyle): ErrorRecord | { error: ErrorRecord } {
  return style.wrapped ? { error: record } : record;
}
