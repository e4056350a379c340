/**
 * What an operation's folder gives the business API (src/operations/<operation>/route.ts): its
 * route, the routes of its reads, and the schemas they refer to by name. The API plugin registers
 * those of every registered operation (src/api/plugin.ts), the shared schemas first.
 */
import type { TSchema } from '@sinclair/typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { CoreBankingPort } from '../../core/port.js';
import type { OperationRunner } from '../../operations/operation-runner.js';
import type { RegisteredOperation } from '../../operations/operation-definition.js';
import type { BusinessRouteConfig } from '../request-context.js';
import { scenarioHeaderSchemas } from '../scenario-header.js';

export interface OperationRoutesOptions {
  operation: RegisteredOperation;
  core: CoreBankingPort;
  runner: OperationRunner;
}

export interface OperationRoutes {
  /** The schemas the routes refer to by name, in the order the OpenAPI document lists them. */
  schemas: readonly TSchema[];
  /** Registers the operation's route (operation.route) and those of its reads (operation.route.readPaths). */
  register(app: FastifyInstance, options: OperationRoutesOptions): Promise<void>;
}

/** The route config of an operation's route: audited under the operation's name, with its family, wrapping and scope. */
export function operationRouteConfig(operation: RegisteredOperation): { business: BusinessRouteConfig } {
  return { business: { family: operation.family, wrapped: operation.route.wrapped, scope: operation.scope, auditedOperation: operation.name } };
}

/** The route config of a read of the operation's folder: the folder's family and wrapping, the read's scope, not audited. */
export function readRouteConfig(operation: RegisteredOperation, scope: string): { business: BusinessRouteConfig } {
  return { business: { family: operation.family, wrapped: operation.route.wrapped, scope, auditedOperation: undefined } };
}

/** The headers every operation's route reads (docs/api.md). */
export const correlationHeaders = Type.Object({
  'x-correlation-id': Type.Optional(Type.String({ description: '1-128 characters of A-Z a-z 0-9 . _ : -; generated when absent; echoed on every response' })),
  'x-channel': Type.Optional(Type.String({ description: 'Originating channel, e.g. SOP, MOBILE, BACKOFFICE' })),
  prefer: Type.Optional(Type.String({ description: 'respond-async → 202 (RFC 7240)' })),
  ...scenarioHeaderSchemas,
});
