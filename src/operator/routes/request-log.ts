/**
 * The sandbox's request log for the operator (CONTRACT §14): every client's requests with the
 * filters a client has at GET /v1/sandbox/requests, and one more, the client. Sandbox mode only:
 * elsewhere there is no log and the route is not registered (404).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { requestLogQuery, requestLogView, type RequestLog } from '../../sandbox/request-log.js';
import { OperatorError } from '../errors.js';

export function requestLogRoutes(options: { requestLog: RequestLog }): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Record<string, string | undefined> }>('/requests', { schema: { hide: true } }, async (request) => {
      const { client, ...rest } = request.query;
      const parsed = requestLogQuery(rest);
      if ('problem' in parsed) throw new OperatorError(400, parsed.problem);
      if (client !== undefined && (client === '' || client.length > 512)) throw new OperatorError(400, 'client must be a client key as listed, e.g. http://localhost:8080/realms/sandbox#treasury-app');
      const page = await options.requestLog.list({ ...parsed.filter, clientKey: client });
      return { requests: page.items.map((row) => requestLogView(row, true)), more: page.more };
    });
  };
}
