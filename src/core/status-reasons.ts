/**
 * The `reason` of an error answer, by HTTP status: one catalogue for the business API and the
 * operator API. The business API's words are fixed (docs/errors.md, "The error record": 400 is
 * `VALIDATION_ERROR`, 502 `CORE_UNAVAILABLE`, 504 `CORE_TIMEOUT`); the operator API is ours and
 * uses the same words, so that one status never reads two ways. docs/errors.md is generated from
 * this table.
 */
export interface StatusReason {
  reason: string;
  /** The business API (`/v1`) answers it; the others only the operator API does. */
  businessApi: boolean;
}

export const statusReasons: Readonly<Record<number, StatusReason>> = {
  400: { reason: 'VALIDATION_ERROR', businessApi: true },
  401: { reason: 'UNAUTHORIZED', businessApi: true },
  403: { reason: 'FORBIDDEN', businessApi: true },
  404: { reason: 'NOT_FOUND', businessApi: true },
  409: { reason: 'CONFLICT', businessApi: true },
  413: { reason: 'PAYLOAD_TOO_LARGE', businessApi: true },
  415: { reason: 'UNSUPPORTED_MEDIA_TYPE', businessApi: true },
  422: { reason: 'BUSINESS_RULE_VIOLATION', businessApi: true },
  429: { reason: 'TOO_MANY_REQUESTS', businessApi: true },
  500: { reason: 'INTERNAL_ERROR', businessApi: true },
  // An operator view the deployment cannot serve (docs/console.md).
  501: { reason: 'NOT_IMPLEMENTED', businessApi: false },
  502: { reason: 'CORE_UNAVAILABLE', businessApi: true },
  503: { reason: 'SERVICE_UNAVAILABLE', businessApi: true },
  504: { reason: 'CORE_TIMEOUT', businessApi: true },
};

/**
 * The reason of `status`. A status outside the table (one the framework raises itself, 405 or
 * 414) reads as the request's fault below 500 and as ours from 500 on.
 */
export function reasonOf(status: number): string {
  return statusReasons[status]?.reason ?? (status >= 500 ? 'INTERNAL_ERROR' : 'VALIDATION_ERROR');
}
