/**
 * What the API docs page (/docs) says beyond the routes' own schemas: the document's description
 * (with the link to the console), the tags with their descriptions, and the OAuth 2.0
 * client-credentials scheme that Swagger UI's "Authorize" uses to obtain a token.
 */
import { operations, operationScopes } from '../operations/registry.js';
import { bearerScheme, dpopScheme, oauthScheme } from './business-security.js';

export { businessSecurity } from './business-security.js';

export const authServiceTag = 'Auth service';
export const apiDescription = [
  'Term deposits and merchandising loan installments over a core banking system.',
  '',
  '**Try it**: click **Authorize**, enter a client of the data file (the demo: `treasury-app` and its secret from `demo/sandbox.json`), tick the scopes and authorize: Swagger UI obtains a token from the sandbox realm\'s token endpoint (client credentials in the Authorization header). Then **Try it out** on an operation: every request example succeeds on the demo data. The examples are the demo data\'s, and their dates are the core\'s current business date.',
  '',
  '**Repeats**: Swagger UI sends no `x-correlation-id`, so the same body from the same client to the same path within the duplicate window (10 minutes by default) answers **409** naming the first operation and its outcome, even when that outcome was a refusal: a request\'s outcome is final, and a repeat never runs twice. To try again, change the body (the amount) or send a new `x-correlation-id`.',
  '',
  '**Postman**: the collection [/collections/postman.json](/collections/postman.json) holds the token request and every business operation with these examples (variables baseUrl, clientId, clientSecret); it runs with `newman run`.',
  '',
  'Tokens: OAuth 2.0 client credentials at `/realms/{realm}/protocol/openid-connect/token` (see the **Auth service** section).',
  '',
  'See the bank behind the API in the [operator console](/console) (sandbox mode; `coregate console` prints a login link).',
].join('\n');

export const apiTags = [
  {
    name: authServiceTag,
    description:
      'OAuth 2.0 authorization server, one per realm (docs/auth.md): the token endpoint (client credentials, RFC 6749 §4.4), token introspection (RFC 7662), the realm\'s signing keys (JWKS) and its OpenID discovery document. The demo realm is `sandbox`. Errors are OAuth error bodies (`error`, `error_description`).',
  },
  // Each operation's tag (its operation.ts), once: the operations of one resource may share it.
  ...operations.map((operation) => operation.tag).filter((tag, index, tags) => tags.findIndex((other) => other.name === tag.name) === index),
  {
    name: 'Operations',
    description: 'The state of an operation answered with 202 (`Prefer: respond-async`, or a slow core): Pending, then Executed with its result or Rejected with its error record. Any scope of the original operation.',
  },
  {
    name: 'Webhooks',
    description: 'The deliveries of the client\'s signed events (Standard Webhooks) to its endpoints: operation.executed, operation.rejected, termDeposit.matured. Any valid token of the client; its own deliveries only. Endpoints are registered by the operator (docs/webhooks.md).',
  },
  {
    name: 'Sandbox',
    description:
      'Sandbox mode only. The request log: your own requests and their answers. Scenarios: the `Coregate-Scenario` header on an operation forces an outcome of the core (502, 504, a late 202 settlement, a slow core); see docs/sandbox.md.',
  },
  { name: 'Health', description: 'Liveness and readiness probes for the orchestrator (no token).' },
];

/** The security schemes: a token from the realm's token endpoint (Authorize), or one pasted as is. */
export function securitySchemes(realm: string) {
  return {
    [oauthScheme]: {
      type: 'oauth2' as const,
      description: `Client credentials at the \`${realm}\` realm's token endpoint. Swagger UI sends the client id and secret in the Authorization header (Basic) and the ticked scopes in the form; no scope ticked: every scope of the client.`,
      flows: {
        clientCredentials: {
          // Relative: resolved against the page's origin, so that it works behind any public URL.
          tokenUrl: `/realms/${encodeURIComponent(realm)}/protocol/openid-connect/token`,
          scopes: { ...operationScopes },
        },
      },
    },
    [bearerScheme]: { type: 'http' as const, scheme: 'bearer', bearerFormat: 'JWT', description: 'An access token obtained elsewhere (e.g. `coregate token`), pasted as is.' },
    [dpopScheme]: {
      type: 'http' as const,
      scheme: 'DPoP',
      description:
        'A DPoP-bound access token (RFC 9449: `token_type` DPoP, `cnf.jkt`; docs/auth.md, "DPoP at the API"), sent as `Authorization: DPoP <token>` with a `DPoP` header holding a new proof of the same key for each request (`htm`, `htu` without the query, `ath` the token\'s SHA-256, `iat`, a `jti` used once; PS256, ES256 or EdDSA). A certificate-bound token (`cnf["x5t#S256"]`) is sent as Bearer over a connection with its TLS client certificate.',
    },
  };
}
