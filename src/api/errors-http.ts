/**
 * Maps whatever a business route throws to a catalogue entry: our own ApiErrors, fastify's
 * validation and body-parsing errors, and anything unexpected (500, logged with its cause).
 */
import { CoreTimeout, CoreUnavailable } from '../core/port.js';
import type { FastifyError } from 'fastify';
import { errorCatalogue as E, BusinessRefusal, type ErrorEntry } from '../core/error-catalogue.js';
import { ApiError } from './error-record.js';
import { freeTextPattern, identifierPattern } from '../operations/schemas/field-limits.js';

export interface MappedError {
  entry: ErrorEntry;
  message: string;
  headers: Readonly<Record<string, string>>;
  unexpected: boolean;
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

export function mapError(error: unknown): MappedError {
  if (error instanceof ApiError) return { entry: error.entry, message: error.message, headers: error.headers, unexpected: false };
  if (error instanceof BusinessRefusal) return { entry: error.entry, message: error.message, headers: {}, unexpected: false };
  if (error instanceof CoreTimeout) return { entry: E.coreTimeout, message: 'The core did not answer in time', headers: {}, unexpected: false };
  if (error instanceof CoreUnavailable) return { entry: E.coreUnavailable, message: 'The core banking system is unavailable', headers: {}, unexpected: false };
  const fastifyError = error as FastifyError & { validation?: ValidationIssue[]; validationContext?: string };
  if (fastifyError.validation && fastifyError.validation.length > 0) return mapValidation(fastifyError.validation[0] as ValidationIssue, fastifyError.validationContext);
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
    return known(E.missingField, `${where}${field} is required`);
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
  return known(E.invalidField, `${where}${base || 'body'} ${issue.message ?? 'is invalid'}`);
}
