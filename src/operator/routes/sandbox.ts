/**
 * Operator route: POST /sandbox/reset (under /operator/v1, authenticated by the operator plugin).
 * Body `{ "confirm": "reset" }`: the word is the confirmation a console button asks for, so that a
 * stray POST cannot empty the store. Only in sandbox mode (403 otherwise): a production store is
 * never reset over HTTP. The data file is read again at each reset, so edits to it are taken.
 */
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Vault } from '../../auth/vault.js';
import { readSandboxFile, DataFileError } from '../../sandbox/data-file.js';
import { CoreDataRefused, CoreSideNotServed, CoreTimeout, CoreUnavailable, hasDataLoad, type CoreBankingPort } from '../../core/port.js';
import { corePart, recordedRemoteCore } from '../../sandbox/core-placement.js';
import { resetSandbox } from '../../sandbox/reset.js';
import type { Store } from '../../store/connect.js';
import type { TargetPolicy } from '../../webhooks/target-address.js';
import { operatorErrorBody } from '../errors.js';
import type { Clock } from '../../core/clock.js';
import type { SigningKeySource } from '../../auth/signing-key-source.js';

export interface SandboxRouteOptions {
  store: Store;
  vault: Vault;
  /** config.sandbox: the route refuses with 403 when false. */
  sandbox: boolean;
  /** The data file the server was started with (config.dataFile); none: 409. */
  dataFile: string | undefined;
  /** The URLs the file's webhook endpoints may have: the server's own (--webhook-allow-private); public only when absent. */
  webhookTargets?: TargetPolicy;
  /** The core behind the port: with a remote one the file's core part goes to it after the reset. */
  core?: CoreBankingPort;
  /** The instance's clock and where new signing keys come from (StartOptions): the system's and fresh ones when absent. */
  clock?: Clock;
  signingKeys?: SigningKeySource;
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
        summary = await resetSandbox(options.store, options.vault, data, {
          webhookTargets: options.webhookTargets ?? { allowPrivate: false },
          ...(options.clock === undefined ? {} : { clock: options.clock }),
          ...(options.signingKeys === undefined ? {} : { keys: options.signingKeys }),
        });
      } catch (error) {
        // Found while loading (a webhook URL the target policy refuses): the reset rolled back.
        if (error instanceof DataFileError) return refuse(reply, 409, `The data file cannot be loaded: ${error.message}; nothing was reset`, path);
        throw error;
      }
      // With a remote core its records are its own: the reset empties the API's database only, and
      // the file's core part goes to the core again, which adds what is missing (balances stay).
      const part = corePart(data);
      const core = options.core;
      if (part !== undefined && core !== undefined && (await recordedRemoteCore(options.store.db)) !== undefined) {
        try {
          if (!hasDataLoad(core)) throw new CoreSideNotServed('data', 'the core takes no data');
          summary = { ...summary, accountsAdded: (await core.loadData(part)).accountsAdded };
        } catch (error) {
          const what = 'The API\'s records were reset, but the data file\'s core part did not reach the core';
          if (error instanceof CoreDataRefused) return refuse(reply, 409, `${what}: it refused ${error.field}: ${error.message}`, path);
          if (error instanceof CoreSideNotServed) return refuse(reply, 409, `${what}: ${error.message}; load it into the core itself`, path);
          if (error instanceof CoreUnavailable || error instanceof CoreTimeout) return refuse(reply, 502, `${what}: ${error.message}; reset again once the core answers`, path);
          throw error;
        }
      }
      request.log.warn({ tablesEmptied: summary.tablesEmptied.length, rowsDeleted: summary.rowsDeleted }, 'sandbox reset');
      return reply.code(200).send(summary);
    });
  };
}

function refuse(reply: FastifyReply, status: number, message: string, path: string): FastifyReply {
  return reply.code(status).send({ ...operatorErrorBody(status, message), path });
}
