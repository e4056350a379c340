/**
 * What the audit cannot do (docs/api.md "Audit"): a record it could not keep, neither in the
 * database nor in the audit spool. The business API answers a request whose record had to be
 * kept before its answer 503 with Retry-After (src/api/errors-http.ts), never a 500: the service
 * is unavailable for audited work until the spool has room, and readiness says so.
 */

/** Why a record could not be kept (`coregate_audit_records_lost_total{reason}`). */
export const auditLossReasons = ['spool_full', 'spool_failed', 'write_failed', 'spool_quarantined'] as const;
export type AuditLossReason = (typeof auditLossReasons)[number];

/** A record the audit could not keep: the spool full, its file system failing, the queue full, or the spool closed. */
export class AuditUnavailable extends Error {
  override name = 'AuditUnavailable';
}
