/**
 * The served OpenAPI document outside sandbox mode names no usable secret. Its token request and
 * introspection examples show the demo client's secret, so that "Try it out" works on the demo data
 * in a sandbox; a production server that still holds the demo clients (a start with the demo data,
 * which it warns about: docs/deployment.md §1) would otherwise publish a working credential on
 * /openapi.json and /docs. There the examples carry a placeholder, as the Postman collection's
 * `clientSecret` is empty (docs/collections.md).
 */
import { exampleClientSecret } from '../auth/route-schemas.js';
import type { OpenApiDocument } from './dated-document.js';

export const exampleSecretPlaceholder = 'your-client-secret';

/** The document as served: unchanged in a sandbox, the example secret replaced by a placeholder elsewhere. */
export function servedDocument(document: OpenApiDocument, sandbox: boolean): OpenApiDocument {
  if (sandbox) return document;
  return JSON.parse(JSON.stringify(document).replaceAll(exampleClientSecret, exampleSecretPlaceholder)) as OpenApiDocument;
}
