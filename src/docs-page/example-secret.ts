/**
 * The API document outside sandbox mode names no usable secret. The token request and introspection
 * examples show the demo client's secret, so that "Try it out" works on the demo data in a sandbox;
 * a production server that still holds the demo clients (a start with the demo data, which it warns
 * about: docs/deployment.md, "The database and the master key") would otherwise publish a working
 * credential. There the examples carry a placeholder, in every form the document is served
 * (/openapi.json, /docs, /docs/yaml), as the Postman collection's `clientSecret` is empty
 * (docs/collections.md).
 */
import { exampleClientSecret } from '../auth/route-schemas.js';

export const exampleSecretPlaceholder = 'your-client-secret';

/**
 * A route's schema as the document shows it (@fastify/swagger's `transform`): unchanged in a
 * sandbox, the example secret replaced by the placeholder elsewhere. Only the document's copy
 * changes: the route validates with its own schema.
 */
export function documentedSchema<T>(schema: T, sandbox: boolean): T {
  if (sandbox || schema === undefined) return schema;
  const text = JSON.stringify(schema);
  return text.includes(exampleClientSecret) ? (JSON.parse(text.replaceAll(exampleClientSecret, exampleSecretPlaceholder)) as T) : schema;
}
