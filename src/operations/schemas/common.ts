/** Schemas shared by the business API's operations: the error records, and the error responses of every business route. */
import { Type, type Static } from '@sinclair/typebox';

export const ErrorDetailSchema = Type.Object(
  {
    code: Type.String({ description: 'Domain code, e.g. TD-422-002 (see docs/errors.md)' }),
    reason: Type.String({ description: 'Textual identifier of the cause, e.g. INSUFFICIENT_FUNDS_SOURCE_ACCOUNT' }),
    message: Type.String({ description: 'Detailed message with concrete values' }),
  },
  { $id: 'ErrorDetail' },
);

export const ErrorRecordSchema = Type.Object(
  {
    status: Type.Integer({ description: 'HTTP status of the error' }),
    reason: Type.String({ description: 'Category: VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, BUSINESS_RULE_VIOLATION, ...' }),
    message: Type.String(),
    path: Type.String({ description: 'HTTP method and path, e.g. POST /v1/term-deposits/initiate' }),
    errordetail: Type.Optional(Type.Array(ErrorDetailSchema)),
  },
  { $id: 'ErrorRecord', description: 'The business API\'s error record (docs/errors.md)' },
);

export const WrappedErrorRecordSchema = Type.Object({ error: ErrorRecordSchema }, { $id: 'WrappedErrorRecord', description: 'The loan operation wraps its error record' });

export type ErrorRecordBody = Static<typeof ErrorRecordSchema>;

/** The same error responses on every business route (the record, or the wrapped record). */
export function errorResponses(wrapped: boolean, statuses: number[]): Record<number, unknown> {
  const schema = wrapped ? Type.Ref(WrappedErrorRecordSchema) : Type.Ref(ErrorRecordSchema);
  return Object.fromEntries(statuses.map((status) => [status, { ...schema, description: errorDescriptions[status] ?? 'Error' }]));
}

const errorDescriptions: Record<number, string> = {
  400: 'Invalid payload or header',
  401: 'Missing, expired or invalid Bearer token',
  403: 'Missing scope, or inactive user or workstation',
  404: 'Resource not found',
  409: 'Duplicate (correlation id or request), or incompatible state',
  413: 'Body over 64 KiB',
  415: 'Content-Type is not application/json',
  422: 'Business rule violated',
  429: 'Too many requests from this client (see Retry-After)',
  500: 'Unexpected internal error',
  502: 'Core banking system unavailable',
  503: 'The service\'s database is unavailable (a failover, a lost connection): repeat with the same x-correlation-id after Retry-After',
  504: 'Core banking system timed out',
};
