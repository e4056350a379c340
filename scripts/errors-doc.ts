/**
 * Renders docs/errors.md from the error catalogue (src/core/error-catalogue.ts) and the reasons
 * by status (src/core/status-reasons.ts).
 * `node --import tsx scripts/errors-doc.ts > docs/errors.md`; a test keeps the two equal.
 */
import { allErrorCodes } from '../src/core/error-catalogue.js';
import { statusReasons } from '../src/core/status-reasons.js';

export function renderErrorsDoc(): string {
  const lines = [
    '# Error catalogue',
    '',
    'Generated from `src/core/error-catalogue.ts` by `node --import tsx scripts/errors-doc.ts`; a test',
    'fails when this file and the catalogue differ. Codes are stable: a code never changes meaning.',
    '',
    '## The error record',
    '',
    'Every business API error answers with one error record: `status`, `reason` (the category',
    'below), `message`, `path` (method and path, e.g. `POST /v1/term-deposits/initiate`) and',
    '`errordetail` (`code`, `reason`, `message`). Term deposits and everything outside the loan',
    'operation return the record as the top-level object; the merchandising loan operation wraps it',
    'in `{"error": {...}}`. `errordetail` is absent on routes that belong to neither operation',
    '(`GET /v1/operations/{reference}`, unknown routes).',
    '',
    '| HTTP | `reason` |',
    '|---|---|',
    ...Object.entries(statusReasons)
      .filter(([, { businessApi }]) => businessApi)
      .map(([status, { reason }]) => `| ${status} | \`${reason}\` |`),
    '',
    'The operator API (`/operator/v1`, [console.md](console.md)) answers `{ "status", "reason",',
    '"message" }` with the same `reason` for each status (one table, `src/core/status-reasons.ts`),',
    `and ${Object.entries(statusReasons)
      .filter(([, { businessApi }]) => !businessApi)
      .map(([status, { reason }]) => `\`${reason}\` for ${status}`)
      .join(', ')}.`,
    '',
    '## Domain codes',
    '',
    'A code is `TD-<status>-<nnn>` (term deposits) or `ML-<status>-<nnn>` (merchandising loans).',
    '',
    '| Code | HTTP | `errordetail[].reason` | When |',
    '|---|---|---|---|',
    ...allErrorCodes().map(({ code, entry }) => `| \`${code}\` | ${entry.status} | \`${entry.reason}\` | ${entry.description} |`),
    '',
    '## Token endpoint errors',
    '',
    'The auth service answers OAuth 2.0 errors (`error`, `error_description`), in the order of',
    '[docs/auth.md](auth.md): `invalid_request` (400), `unsupported_grant_type` (400),',
    '`invalid_client` (401), `unauthorized_client` (400), `invalid_scope` (400), and `not_found`',
    '(404, unknown realm).',
    '',
  ];
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(renderErrorsDoc());
