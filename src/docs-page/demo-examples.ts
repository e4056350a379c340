/**
 * The examples of the API docs page (/docs, /openapi.json) and of the Postman collection: request
 * and response bodies of the demo data (demo/sandbox.json: customer C0001, its USD accounts,
 * product TDFIX/TD30-365, loan facility 7000000001 and its installment 1), dated by the core's
 * business date. Swagger UI invents an example from a schema's patterns when none is given (a
 * product code of random punctuation), so every JSON answer gets one here; and the dates follow
 * the business date, so that "Try it out" still succeeds after `coregate core advance`.
 * Values the core generates (contract numbers, references) have the core's own formats.
 */
import { errorCatalogue as E, type Family } from '../core/error-catalogue.js';
import { errorRecord, type ErrorRecord } from '../operations/error-record.js';
import { operations, operationScopes, partsOf } from '../operations/registry.js';
import { sampleOperationReference } from './demo-values.js';
import type { ExampleRefusal, OperationExamples } from './operation-examples.js';

export { demoCalendar, sampleContractNumber, sampleOperationReference } from './demo-values.js';

/** Each registered operation's examples (its folder's examples.ts), loaded once with this module. */
const operationExamples: ReadonlyArray<{ operation: (typeof operations)[number]; examples: OperationExamples }> = (await partsOf('examples')).map(({ operation, part }) => ({
  operation,
  examples: part.examples,
}));

/** The first registered operation: the page's generic examples (an operation's view, the request log) show it. */
const shown = operationExamples[0];

/** The request body of an operation (by its name), valued on the business date. */
export function requestExample(operationName: string, businessDate: string): unknown {
  return operationExamples.find(({ operation }) => operation.name === operationName)?.examples.request(businessDate);
}

/** Links from an operation's answers to the reads (OpenAPI links), by operationId. */
export function linkExamples(): Record<string, Record<string, unknown>> {
  return Object.assign({}, ...operationExamples.map(({ examples }) => examples.links));
}

/** Components whose own example follows the business date, by name. */
export function datedSchemaExamples(businessDate: string): Record<string, unknown> {
  return Object.fromEntries(operationExamples.flatMap(({ examples }) => Object.entries(examples.datedSchemas).map(([name, example]) => [name, example(businessDate)])));
}

/** The 200 and 202 bodies, by operationId and status. */
export function successExamples(businessDate: string): Record<string, Record<string, unknown>> {
  const operationSuccesses: Record<string, Record<string, unknown>> = Object.assign({}, ...operationExamples.map(({ examples }) => examples.successes(businessDate)));
  const shownRequest = shown?.examples.request(businessDate);
  const shownResult = shown === undefined ? undefined : operationSuccesses[shown.operation.name]?.[200];
  return {
    ...operationSuccesses,
    getOperation: { 200: { reference: sampleOperationReference, operation: shown?.operation.name, status: 'Executed', result: shownResult } },
    listWebhookDeliveries: {
      200: {
        deliveries: [
          {
            id: '0192f0c5-1a2b-7c3d-8e4f-5a6b7c8d9e0f',
            eventId: 'msg_0192f0c5-0f1e-7d2c-9b3a-4c5d6e7f8a9b',
            eventType: 'operation.executed',
            endpointId: '0192f0b0-2c3d-7e4f-8a5b-6c7d8e9f0a1b',
            url: 'https://treasury.example.com/webhooks/coregate',
            status: 'delivered',
            attempts: 1,
            lastStatusCode: 204,
            lastError: null,
            nextAttemptAt: null,
            deliveredAt: `${businessDate}T10:15:31.004Z`,
            createdAt: `${businessDate}T10:15:30.456Z`,
          },
        ],
      },
    },
    listSandboxRequests: {
      200: {
        requests: [
          {
            id: '0192f0c4-5b6d-7a1b-8c2d-3e4f5a6b7c8d',
            recordedAt: `${businessDate}T10:15:30.101Z`,
            method: shown?.operation.route.method,
            path: shown?.operation.route.path,
            status: 200,
            correlationId: 'order-4711',
            durationMs: 14,
            operationReference: sampleOperationReference,
            scenario: null,
            request: { headers: { 'content-type': 'application/json', 'x-correlation-id': 'order-4711' }, body: shownRequest },
            response: { headers: { 'content-type': 'application/json; charset=utf-8', 'x-correlation-id': 'order-4711' }, body: shownResult },
          },
        ],
        more: false,
      },
    },
    ...authExamples(),
  };
}

/** The demo client's scopes: every operation's. */
const demoScopes = Object.keys(operationScopes).join(' ');
const demoIssuer = 'http://localhost:8080/realms/sandbox';

/** The auth service's answers for the demo client treasury-app of the realm sandbox. */
function authExamples(): Record<string, Record<string, unknown>> {
  const oauthErrors = {
    400: { error: 'invalid_scope', error_description: 'scope "payments:write" is not granted to client treasury-app' },
    401: { error: 'invalid_client', error_description: 'Client authentication failed' },
    404: { error: 'not_found', error_description: 'Realm "sandbox-typo" not found' },
    413: { error: 'invalid_request', error_description: 'The request body exceeds 16 KiB' },
    429: { error: 'temporarily_unavailable', error_description: 'Too many failed client authentications; retry after 60 seconds' },
  };
  const realmNotFound = { 404: oauthErrors[404] };
  return {
    requestToken: {
      200: {
        access_token: 'eyJhbGciOiJFUzI1NiIsImtpZCI6InNhbmRib3gtMSIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJodHRwOi8vbG9jYWxob3N0OjgwODAvcmVhbG1zL3NhbmRib3giLCJhenAiOiJ0cmVhc3VyeS1hcHAifQ.c2lnbmF0dXJl',
        expires_in: 300,
        refresh_expires_in: 0,
        token_type: 'Bearer',
        'not-before-policy': 0,
        scope: demoScopes,
      },
      ...oauthErrors,
    },
    introspectToken: {
      200: {
        active: true,
        token_type: 'Bearer',
        iss: demoIssuer,
        sub: 'svc-treasury',
        aud: 'coregate-api',
        azp: 'treasury-app',
        client_id: 'treasury-app',
        scope: demoScopes,
        backbone_user: 'svc-treasury',
        workstation: 'WS-TREASURY-01',
        iat: 1772445600,
        exp: 1772445900,
      },
      ...oauthErrors,
      400: { error: 'invalid_request', error_description: 'the token parameter is missing' },
    },
    realmKeys: {
      200: {
        keys: [
          {
            kty: 'EC',
            crv: 'P-256',
            x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
            y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
            kid: 'sandbox-1',
            alg: 'ES256',
            use: 'sig',
          },
        ],
      },
      ...realmNotFound,
    },
    realmDiscovery: {
      200: {
        issuer: demoIssuer,
        token_endpoint: `${demoIssuer}/protocol/openid-connect/token`,
        jwks_uri: `${demoIssuer}/protocol/openid-connect/certs`,
        introspection_endpoint: `${demoIssuer}/protocol/openid-connect/token/introspect`,
        grant_types_supported: ['client_credentials'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      },
      ...realmNotFound,
    },
  };
}

/**
 * The refusal each status illustrates, with a message naming demo values as the real one does: on
 * an operation's routes (its family's) the operation's own where it has one, else the page's.
 */
function refusalOf(status: number, family: Family | undefined, businessDate: string): ExampleRefusal {
  const own = operationExamples.find(({ operation }) => operation.family === family)?.examples.refusal(status, businessDate);
  if (own !== undefined) return own;
  switch (status) {
    case 400:
      return { entry: E.invalidField, message: 'limit must be at most 500' };
    case 401:
      return { entry: E.invalidToken, message: 'The access token expired' };
    case 403:
      return { entry: E.insufficientScope, message: `The token lacks the scope ${shown?.operation.scope ?? ''}` };
    case 404:
      return { entry: E.operationNotFound, message: `operation ${sampleOperationReference} not found` };
    case 413:
      return { entry: E.payloadTooLarge, message: 'The body exceeds 65536 bytes' };
    case 415:
      return { entry: E.unsupportedMediaType, message: 'Content-Type text/plain is not supported; send application/json' };
    case 429:
      return { entry: E.tooManyRequests, message: 'Too many requests from client treasury-app; retry after 1 second' };
    case 500:
      return { entry: E.internalError, message: 'Unexpected internal error; the log has the cause' };
    case 502:
      return { entry: E.coreUnavailable, message: 'The core banking system is unavailable; repeat with x-correlation-id order-2026-0042 to reconcile' };
    case 503:
      return { entry: E.databaseUnavailable, message: 'The service\'s database is unavailable; try again shortly' };
    case 504:
      return { entry: E.coreTimeout, message: 'The core did not answer within 10000 ms; repeat with x-correlation-id order-2026-0042 to reconcile' };
    default:
      throw new Error(`no example refusal for status ${status}`);
  }
}

/** The error record of a business route for one status (`path` as "METHOD /path"), wrapped where the route wraps it. */
export function errorExample(status: number, family: Family | undefined, path: string, wrapped: boolean, businessDate: string): ErrorRecord | { error: ErrorRecord } {
  const { entry, message } = refusalOf(status, family, businessDate);
  const record = errorRecord(entry, message, path, family);
  return wrapped ? { error: record } : record;
}
