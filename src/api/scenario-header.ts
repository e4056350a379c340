/**
 * `Coregate-Scenario` and `Coregate-Scenario-Delay-Ms` (docs/sandbox.md, "Scenarios"): read once
 * the request is authenticated, before its correlation id is consumed, so that a refused header
 * consumes nothing. Outside sandbox mode either header is refused, never ignored: a client that
 * believes it forced a failure must not have executed a real operation instead.
 */
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { errorCatalogue as E } from '../core/error-catalogue.js';
import { isScenarioName, scenarioDelayDefaultMs, scenarioDelayMaxMs, scenarioEffects, scenarioNames, type Scenario } from '../operations/scenario.js';
import { ApiError } from './error-record.js';
import type { BusinessRouteConfig } from './request-context.js';

export const scenarioHeader = 'coregate-scenario';
export const scenarioDelayHeader = 'coregate-scenario-delay-ms';

/** The request's scenario; undefined without the headers; throws the 400 a bad one is. */
export function readScenario(request: FastifyRequest, config: BusinessRouteConfig, sandbox: boolean): Scenario | undefined {
  const name = request.headers[scenarioHeader];
  const delay = request.headers[scenarioDelayHeader];
  if (name === undefined && delay === undefined) return undefined;
  if (!sandbox) throw new ApiError(E.scenarioNotAllowed, 'Coregate-Scenario is a sandbox feature and this instance is not in sandbox mode (coregate serve --sandbox): remove the header');
  if (config.auditedOperation === undefined) {
    throw new ApiError(E.invalidScenario, 'Coregate-Scenario applies to the operations that execute (POST /v1/term-deposits/initiate, POST .../installments/{installmentSequence}/execute)');
  }
  if (typeof name !== 'string') throw new ApiError(E.invalidScenario, `Send one Coregate-Scenario header naming one of: ${scenarioNames.join(', ')}`);
  const trimmed = name.trim();
  if (!isScenarioName(trimmed)) throw new ApiError(E.invalidScenario, `Coregate-Scenario "${trimmed.slice(0, 64)}" is not a scenario; the known ones are: ${scenarioNames.join(', ')}`);
  if (delay === undefined) return { name: trimmed, delayMs: scenarioDelayDefaultMs };
  const delayMs = typeof delay === 'string' && /^\s*[0-9]{1,5}\s*$/.test(delay) ? Number(delay) : Number.NaN;
  if (!(delayMs <= scenarioDelayMaxMs)) throw new ApiError(E.invalidScenario, `Coregate-Scenario-Delay-Ms must be one integer from 0 to ${scenarioDelayMaxMs} (milliseconds)`);
  return { name: trimmed, delayMs };
}

/** The scenario header as sent (the request log's record of a refused one), cut to the log's column. */
export function sentScenario(request: FastifyRequest): string | undefined {
  const name = request.headers[scenarioHeader];
  return typeof name === 'string' ? name.slice(0, 32) : undefined;
}

/** The headers as the OpenAPI document shows them on each operation that executes. */
export const scenarioHeaderSchemas = {
  [scenarioHeader]: Type.Optional(
    Type.Unsafe<string>({
      type: 'string',
      enum: [...scenarioNames],
      description: `Sandbox mode only (elsewhere 400 SCENARIO_NOT_ALLOWED): forces an outcome of the core for this request's first execution (docs/sandbox.md, "Scenarios"). ${scenarioNames.map((scenario) => `\`${scenario}\`: ${scenarioEffects[scenario]}.`).join(' ')}`,
    }),
  ),
  [scenarioDelayHeader]: Type.Optional(
    Type.String({
      pattern: '^\\s*[0-9]{1,5}\\s*$',
      // No example: Swagger UI's "Try it out" would send it, and a request without a scenario must stay one.
      description: `Sandbox mode only: how late an async-* scenario settles, or a slow core answers, in milliseconds (0 to ${scenarioDelayMaxMs}; default ${scenarioDelayDefaultMs}).`,
    }),
  ),
};
