/**
 * Operator route: POST /sandbox/reset (under /operator/v1, authenticated by the operator plugin).
 * Body `{ "confirm": "reset" }`: the word is the confirmation a console button asks for, so that a
 * stray POST cannot empty the store. Only in sandbox mode (403 otherwise): a production store is
 * never reset over HTTP. The data file is read again at each reset, so edits to it are taken.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Vault } from '../../auth/vault.js';
import { readSandboxFile, DataFileError } from '../../sandbox/data-file.js';
import { resetSandbox } from '../../sandbox/reset.js';
import type { Store } from '../../store/connect.js';
import type { TargetPolicy } from '../../webhooks/target-address.js';
import { operatorErrorBody } from '../errors.js';

export interface SandboxRouteOptions {
  store: Store;
  vault: Vault;
  /** config.sandbox: the route refuses with 403 when false. */
  sandbox: boolean;
  /** The data file the server was started with (config.dataFile); none: 409. */
  dataFile: string | undefined;
  /** The URLs the file's webhook endpoints may have: the server's own (--webhook-allow-private); public only when absent. */
  webhookTargets?: TargetPolicy;
}

export function sandboxRoutes(options: SandboxRouteOptions): FastifyPluginAsync {
  return async (app) => {
    app.post('/sandbox/reset', async (request, reply) => {
      const path = `POST ${request.url.split('?')[0] ?? ''}`;
      if (!options.sandbox) {
        return refuse(reply, 403, 'Sandbox reset is available only in sandbox mode (coregate serve --sandbox)', path);
      }
      const body = request.body as { confirm?: unknown } | null | undefined;
      if (typeof body !== 'object' || body === null || body.confirm !== 'reset') {
        return refuse(reply, 400, 'Send {"confirm": "reset"} to confirm: the reset deletes every deposit, operation and posting', path);
      }
      if (options.dataFile === undefined) {
        return refuse(reply, 409, 'This server was started without a data file: start it with --data FILE to reset from that file', path);
      }
      let data;
      try {
        data = readSandboxFile(options.dataFile);
      } catch (error) {
        if (error instanceof DataFileError) return refuse(reply, 409, `The data file cannot be loaded: ${error.message}`, path);
        throw error;
      }
      let summary;
      try {
        summary = await resetSandbox(options.store, options.vault, data, options.webhookTargets ?? { allowPrivate: false });
      } catch (error) {
        // Found while loading (a webhook URL the target policy refuses): the reset rolled back.
        if (error instanceof DataFileError) return refuse(reply, 409, `The data file cannot be loaded: ${error.message}; nothing was reset`, path);
        throw error;
      }
      request.log.warn({ tablesEmptied: summary.tablesEmptied.length, rowsDeleted: summary.rowsDeleted }, 'sandbox reset');
      return reply.code(200).send(summary);
    });
  };
}

function refuse(reply: FastifyReply, status: number, message: string, path: string): FastifyReply {
  return reply.code(status).send({ ...operatorErrorBody(status, message), path });
}
