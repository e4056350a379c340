/**
 * Errors of the operator API: `{ "status", "reason", "message" }`, the shape of the server's 404
 * handler, with the business API's reason for each status (src/core/status-reasons.ts). Route
 * modules throw OperatorError; the plugin's error handler writes the body.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { reasonOf } from '../core/status-reasons.js';
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from '../store/engine/database-unavailable.js';

export class OperatorError extends Error {
  override name = 'OperatorError';
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface OperatorErrorBody {
  status: number;
  reason: string;
  message: string;
}

export function operatorErrorBody(status: number, message: string): OperatorErrorBody {
  return { status, reason: reasonOf(status), message };
}

/** The plugin's error handler: expected errors keep their status and message, others are a logged 500. */
export async function handleOperatorError(error: FastifyError | OperatorError, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (error instanceof OperatorError) return reply.code(error.statusCode).headers(error.headers).send(operatorErrorBody(error.statusCode, error.message));
  const fastifyError = error as FastifyError & { validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }>; validationContext?: string };
  if (fastifyError.validation && fastifyError.validation.length > 0) {
    const issue = fastifyError.validation[0];
    const where = `${fastifyError.validationContext ?? 'request'}${issue?.instancePath ? issue.instancePath.replace(/\//g, '.') : ''}`;
    const property = typeof issue?.params?.additionalProperty === 'string' ? ` (${issue.params.additionalProperty})` : typeof issue?.params?.missingProperty === 'string' ? ` (${issue.params.missingProperty})` : '';
    return reply.code(400).send(operatorErrorBody(400, `The ${where} is invalid: ${issue?.message ?? 'not as documented'}${property}; see docs/console.md`));
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    const message =
      status === 415 ? 'Content-Type must be application/json' : status === 413 ? 'The request body is too large' : fastifyError.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError ? 'The request body is not valid JSON' : error.message;
    return reply.code(status).send(operatorErrorBody(status, message));
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: error }, 'operator API request met a database outage');
    return reply.code(503).header('retry-after', String(databaseRetryAfterSeconds)).send(operatorErrorBody(503, 'The service\'s database is unavailable; try again shortly'));
  }
  request.log.error({ err: error }, 'operator API request failed');
  return reply.code(500).send(operatorErrorBody(500, 'The operator API failed unexpectedly; the log has the cause'));
}
