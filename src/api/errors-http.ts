/**
 * Maps whatever a business route throws to a catalogue entry: our own ApiErrors, fastify's
 * validation and body-parsing errors, and anything unexpected (500, logged with its cause).
 */
import { CoreTimeout, CoreUnavailable } from '../core/port.js';
import type { FastifyError } from 'fastify';
import { errorCatalogue as E, BusinessRefusal, type ErrorEntry } from '../core/error-catalogue.js';
import { ApiError } from './error-record.js';
import { freeTextPattern, identifierPattern } from '../operations/schemas/field-limits.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../store/engine/database-unavailable.js';
import { AuditUnavailable } from '../audit/audit-unavailable.js';

export interface MappedError {
  entry: ErrorEntry;
  message: string;
  headers: Readonly<Record<string, string>>;
  unexpected: boolean;
  /** An outage met by the request (the database): logged as a warning, not as a defect. */
  outage?: boolean;
  /** The request's own audit record could not be kept (AuditUnavailable): it is not attempted again. */
  auditUnavailable?: boolean;
  /** Every problem found, the first being entry/message: a request's validation reports them all. */
  details?: ReadonlyArray<{ entry: ErrorEntry; message: string }>;
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** With ajv's verbose option: the value that failed (the object, for `required`) and its schema. */
  data?: unknown;
  parentSchema?: { description?: unknown };
}

/** A request with many problems reports this many at most, so a hostile body cannot make a huge answer. */
export const validationIssuesMax = 20;

export function mapError(error: unknown): MappedError {
  if (error instanceof ApiError) return { entry: error.entry, message: error.message, headers: error.headers, unexpected: false };
  if (error instanceof BusinessRefusal) return { entry: error.entry, message: error.message, headers: {}, unexpected: false };
  if (error instanceof CoreTimeout) return { entry: E.coreTimeout, message: 'The core did not answer in time', headers: {}, unexpected: false };
  if (error instanceof CoreUnavailable) return { entry: E.coreUnavailable, message: 'The core banking system is unavailable', headers: {}, unexpected: false };
  if (isDatabaseUnavailable(error)) {
    return {
      entry: E.databaseUnavailable,
      message: 'The service\'s database is unavailable; repeat the request with the same x-correlation-id',
      headers: { 'retry-after': String(databaseRetryAfterSeconds) },
      unexpected: false,
      outage: true,
    };
  }
  if (error instanceof AuditUnavailable) {
    // An audit record the request owed before its answer could not be kept (docs/api.md, Audit):
    // the audit spool is full (the database has been down long enough, and readiness says so), its
    // disk failed, or the service is shutting down. The record's loss is logged and counted where
    // it happened; the request is not audited again.
    return {
      entry: E.databaseUnavailable,
      message: 'The service cannot audit requests now; repeat the request with the same x-correlation-id later',
      headers: { 'retry-after': String(databaseRetryAfterSeconds) },
      unexpected: false,
      auditUnavailable: true,
    };
  }
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation && fastifyError.validation.length > 0) return mapValidationIssues(fastifyError.validation, fastifyError.validationContext);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return known(E.unsupportedMediaType, 'Content-Type must be application/json');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return known(E.payloadTooLarge, 'The request body exceeds 64 KiB');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return known(E.missingField, 'The request body is required');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return known(E.malformedJson, 'The request body does not match its Content-Length');
    default:
      break;
  }
  if (fastifyError.statusCode === 400 && (error instanceof SyntaxError || fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY')) {
    return known(E.malformedJson, 'The request body is not valid JSON');
  }
  if (fastifyError.statusCode === 413) return known(E.payloadTooLarge, 'The request body exceeds 64 KiB');
  if (fastifyError.statusCode === 415) return known(E.unsupportedMediaType, 'Content-Type must be application/json');
  return { entry: E.internalError, message: 'Unexpected internal error', headers: {}, unexpected: true };
}

function known(entry: ErrorEntry, message: string): MappedError {
  return { entry, message, headers: {}, unexpected: false };
}

/**
 * Every issue of a request's validation (ajv with allErrors), each with its own message and code,
 * in the order found; the first decides the record's top-level code. Issues that only say "one of
 * the alternatives failed" add nothing to the specific ones and are left out.
 */
function mapValidationIssues(issues: readonly ValidationIssue[], context: string | undefined): MappedError {
  const specific = issues.filter((issue) => !['anyOf', 'oneOf', 'if', 'not'].includes(issue.keyword));
  const seen = new Set<string>();
  const details: Array<{ entry: ErrorEntry; message: string }> = [];
  for (const issue of specific.length > 0 ? specific : issues) {
    const mapped = mapValidation(issue, context);
    if (seen.has(mapped.message)) continue;
    seen.add(mapped.message);
    details.push({ entry: mapped.entry, message: mapped.message });
    if (details.length === validationIssuesMax) break;
  }
  const [first] = details as [{ entry: ErrorEntry; message: string }];
  const message = details.length === 1 ? first.message : `${first.message} (and ${details.length - 1} more problem${details.length === 2 ? '' : 's'}: see errordetail)`;
  return { entry: first.entry, message, headers: {}, unexpected: false, details };
}

function mapValidation(issue: ValidationIssue, context: string | undefined): MappedError {
  const base = issue.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
  const where = context === 'params' ? 'path parameter ' : '';
  if (issue.keyword === 'required') {
    const missing = String(issue.params.missingProperty ?? '');
    const field = base === '' ? missing : `${base}.${missing}`;
    return known(E.missingField, `${where}${field} is required${spellingHint(issue.data, missing)}`);
  }
  if (base === '' && issue.keyword === 'type' && context === 'body') return known(E.missingField, 'The request body must be a JSON object');
  if (issue.keyword === 'format' && issue.params.format === 'date') return known(E.invalidDate, `${where}${base} must be a calendar date (YYYY-MM-DD)`);
  if (issue.keyword === 'const' || issue.keyword === 'enum') {
    const allowed = issue.params.allowedValue ?? issue.params.allowedValues;
    return known(E.invalidField, `${where}${base} must be ${JSON.stringify(allowed)}`);
  }
  if (issue.keyword === 'pattern' && issue.params.pattern === identifierPattern) return known(E.invalidField, `${where}${base} must not contain control characters`);
  if (issue.keyword === 'pattern' && issue.params.pattern === freeTextPattern) {
    return known(E.invalidField, `${where}${base} must not contain control characters other than tab and line breaks`);
  }
  if (issue.keyword === 'maxLength') return known(E.invalidField, `${where}${base} must be at most ${String(issue.params.limit)} characters`);
  // Never a regular expression in a message: the field's own description says what it takes.
  if (issue.keyword === 'pattern') {
    const description = typeof issue.parentSchema?.description === 'string' ? issue.parentSchema.description : undefined;
    return known(E.invalidField, `${where}${base} ${description ? `is not valid: expected ${lowerFirst(description)}` : 'is not in the expected format'}, got ${quoted(issue.data)}`);
  }
  return known(E.invalidField, `${where}${base || 'body'} ${issue.message ?? 'is invalid'}`);
}

/**
 * The known trap: a field present under another spelling (the term deposit's `currencycode` is
 * lower case, the loan's `currencyCode` is not). Names the member found and the one expected.
 */
function spellingHint(container: unknown, missing: string): string {
  if (typeof container !== 'object' || container === null || Array.isArray(container)) return '';
  const found = Object.keys(container).find((key) => key !== missing && key.toLowerCase() === missing.toLowerCase());
  return found === undefined ? '' : ` (found "${found}": this field is spelled "${missing}")`;
}

/** The value sent, quoted and cut short: a message never echoes a long payload. */
function quoted(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 66 ? `${text.slice(0, 64)}…` : text;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}
