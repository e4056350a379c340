/**
 * The sandbox's request log for the operator (docs/sandbox.md, "The request log"): every client's
 * requests with the filters a client has at GET /v1/sandbox/requests, and one more, `client`
 * (`realm/clientId`, as the clients list names them). Sandbox mode only: elsewhere there is no log
 * and the route is not registered (404).
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { requestLogQuery, requestLogView, type RequestLog } from '../../sandbox/request-log.js';
import { clientOfKey } from '../../store/operator-queries.js';
import { OperatorError } from '../errors.js';

export function requestLogRoutes(options: { requestLog: RequestLog }): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.get<{ Querystring: Record<string, string | undefined> }>('/requests', { schema: { hide: true } }, async (request) => {
      const { client, ...rest } = request.query;
      const parsed = requestLogQuery(rest);
      if ('problem' in parsed) throw new OperatorError(400, parsed.problem);
      const named = client === undefined || client === '' ? undefined : /^([^/#\u0000-\u001f\u007f]{1,128})\/([^/#\u0000-\u001f\u007f]{1,256})$/.exec(client);
      if (named === null) throw new OperatorError(400, `client must be realm/clientId as the clients list names them (e.g. sandbox/treasury-app), got "${client?.slice(0, 64) ?? ''}"`);
      const clientKeySuffix = named ? `/realms/${encodeURIComponent(named[1] ?? '')}#${named[2] ?? ''}` : undefined;
      const page = await options.requestLog.list({ ...parsed.filter, clientKeySuffix });
      return { requests: page.items.map((row) => ({ ...requestLogView(row), client: clientOfKey(row.clientKey) })), more: page.more };
    });
  };
}
