/** What the business API's hooks attach to a request, and the route config they read. */
import type {} from '@fastify/swagger';
import type { Family } from '../core/error-catalogue.js';
import type { NumberSource } from '../core/money.js';
import type { Principal } from './bearer-auth.js';
import type { Scenario } from '../operations/scenario.js';

export interface BusinessRouteConfig {
  family: Family | undefined;
  /** The loan operation wraps its error records in `{"error": ...}`. */
  wrapped: boolean;
  /** The scope the route requires; undefined when the handler decides (operations lookup). */
  scope: string | undefined;
  /** Execution routes are audited (docs/api.md, "Audit"); reads are not. */
  auditedOperation: string | undefined;
  /** False for the request log's own route: reading the log is not logged. */
  requestLogged?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
    /**
     * `generated`: the id was made by a client library for one call (`x-correlation-id-generated:
     * true`): it keeps the call's retries together, and the duplicate window still applies.
     */
    correlation: { id: string; supplied: boolean; valid: boolean; generated: boolean };
    /** Set once the request's audit record is written, so it is written once. */
    audited: boolean;
    /** Epoch ms at which the request arrived: the audit record's duration. */
    startedAtMs: number;
    /** The texts the body's numbers were written with (strict-json.ts); undefined without a JSON body. */
    numberTextOf: NumberSource | undefined;
    /** The sandbox scenario the request forces (scenario-header.ts). */
    scenario: Scenario | undefined;
    /** The operation the answer is about (routes/outcome.ts): the request log links to it. */
    operationReference: string | undefined;
    /** The body as sent and as answered: the sandbox's request log only (plugin.ts). */
    loggedRequestBody: string | undefined;
    loggedResponseBody: string | undefined;
  }
  interface FastifyContextConfig {
    business?: BusinessRouteConfig;
  }
}
