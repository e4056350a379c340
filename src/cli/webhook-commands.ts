/**
 * `coregate webhooks add|list|remove|deliveries|retry`: operator commands on the store's webhook
 * endpoints and deliveries (docs/webhooks.md). They open the store themselves, as the other
 * operator commands do; the store layer loads only when a command runs. `add` prints the new
 * endpoint's signing secret once (or takes one from COREGATE_WEBHOOK_SECRET, never from a flag).
 */
import type { Command } from 'commander';
import type { Clock } from '../core/clock.js';
import { CommandError } from './command-error.js';
import { printerOf, table, type CommandEnv, type CommandIo, type Printer } from './command-io.js';
import { dbOption, jsonOption } from './common-options.js';

const actions = async (env: CommandEnv) => {
  const [{ withSealingStore }, admin, { webhookAllowPrivateSetting }] = await Promise.all([import('./store-session.js'), import('../webhooks/webhook-admin.js'), import('../config.js')]);
  return {
    admin,
    /** The target policy of a registration: the same flag and variable as `coregate serve`'s. */
    targets: (flag: boolean | undefined) => ({ allowPrivate: webhookAllowPrivateSetting(flag, env) }),
    /** The store with the vault (endpoint secrets are sealed); a refusal of the admin layer is a usage error. */
    async withStore<T>(db: string | undefined, work: (store: import('../store/connect.js').Store, vault: import('../auth/vault.js').Vault) => Promise<T>): Promise<T> {
      try {
        return await withSealingStore({ ...(db === undefined ? {} : { db }), env }, work);
      } catch (error) {
        if (error instanceof admin.EndpointRefused) throw new CommandError(error.message);
        throw error;
      }
    },
  };
};

function splitList(value: string | undefined): string[] {
  return value === undefined ? [] : value.split(/[\s,]+/).filter((item) => item !== '');
}

export function addWebhookCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const webhooks = program.command('webhooks').description('signed events: endpoints of clients and their deliveries (docs/webhooks.md)');
  addEndpointCommand(webhooks, io, print);
  addEndpointListCommands(webhooks, io, print);
  addDeliveryCommands(webhooks, io, print);
}

function addEndpointCommand(webhooks: Command, io: CommandIo, print: Printer): void {
  webhooks
    .command('add')
    .description('register an endpoint of a client; prints its signing secret once (COREGATE_WEBHOOK_SECRET gives one)')
    .requiredOption('--realm <realm>', 'realm of the client')
    .requiredOption('--client-id <id>', 'the client the events are about')
    .requiredOption('--url <url>', 'where events are POSTed (https, or http for a local receiver)')
    .option('--event-types <types>', 'comma-separated event types (default: every type)')
    .option('--webhook-allow-private', 'accept a loopback or private address, for a server started with the same flag (env COREGATE_WEBHOOK_ALLOW_PRIVATE)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags: { realm: string; clientId: string; url: string; eventTypes?: string; webhookAllowPrivate?: boolean; db?: string; json?: boolean; clock: Clock }) => {
      const { admin, withStore, targets } = await actions(io.env);
      const given = io.env.COREGATE_WEBHOOK_SECRET;
      const policy = targets(flags.webhookAllowPrivate);
      const endpoint = await withStore(flags.db, (store, vault) =>
        admin.addEndpoint(store.db, vault, { realm: flags.realm, clientId: flags.clientId, url: flags.url, eventTypes: splitList(flags.eventTypes), ...(given ? { secret: given } : {}) }, policy, flags.clock.now()),
      );
      if (flags.json) return print(endpoint);
      print(`Endpoint ${endpoint.id} of ${endpoint.clientId} (${endpoint.realm}): ${endpoint.url}`);
      print(`Event types: ${endpoint.eventTypes.length === 0 ? 'all' : endpoint.eventTypes.join(', ')}`);
      if (given) print('Signing secret: the one given in COREGATE_WEBHOOK_SECRET.');
      else print(`Signing secret: ${endpoint.secret}\nStore it now: it is shown only once.`);
    });
}

/** `list` and `remove`. */
function addEndpointListCommands(webhooks: Command, io: CommandIo, print: Printer): void {
  webhooks
    .command('list')
    .description('list endpoints (never their secrets)')
    .option('--realm <realm>', 'only this realm\'s client (with --client-id)')
    .option('--client-id <id>', 'only this client\'s endpoints')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags: { realm?: string; clientId?: string; db?: string; json?: boolean }) => {
      if ((flags.realm === undefined) !== (flags.clientId === undefined)) throw new CommandError('give --realm and --client-id together, or neither');
      const { admin, withStore } = await actions(io.env);
      const client = flags.realm !== undefined && flags.clientId !== undefined ? { realm: flags.realm, clientId: flags.clientId } : undefined;
      const endpoints = await withStore(flags.db, (store) => admin.endpointsOf(store.db, client));
      if (flags.json) return print(endpoints);
      print(
        table(
          ['ID', 'REALM', 'CLIENT ID', 'URL', 'ENABLED', 'EVENT TYPES', 'CREATED'],
          endpoints.map((e) => [e.id, e.realm, e.clientId, e.url, String(e.enabled), e.eventTypes.length === 0 ? 'all' : e.eventTypes.join(','), e.createdAt]),
        ),
      );
    });
  webhooks
    .command('remove')
    .description('remove an endpoint (its deliveries not sent yet are dropped)')
    .argument('<id>', 'endpoint id (coregate webhooks list)')
    .addOption(dbOption())
    .action(async (id: string, flags: { db?: string }) => {
      const { admin, withStore } = await actions(io.env);
      if (!(await withStore(flags.db, (store) => admin.removeEndpoint(store.db, id)))) throw new CommandError(`Endpoint ${id} does not exist (coregate webhooks list)`);
      print(`Endpoint ${id} removed.`);
    });
}

/** `deliveries` and `retry`. */
function addDeliveryCommands(webhooks: Command, io: CommandIo, print: Printer): void {
  webhooks
    .command('deliveries')
    .description('list deliveries, newest first: status, attempts, last status code and error')
    .option('--status <status>', 'pending, delivered or failed')
    .option('--limit <n>', 'how many (1-500)', '50')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags: { status?: string; limit: string; db?: string; json?: boolean }) => {
      const limit = Number(flags.limit);
      const { admin, withStore } = await actions(io.env);
      const deliveries = await withStore(flags.db, (store) => admin.deliveriesOf(store.db, { limit, ...(flags.status === undefined ? {} : { status: flags.status }) }));
      if (flags.json) return print(deliveries);
      print(
        table(
          ['ID', 'EVENT', 'TYPE', 'URL', 'STATUS', 'ATTEMPTS', 'LAST CODE', 'LAST ERROR', 'CREATED'],
          deliveries.map((d) => [d.id, d.eventId, d.eventType, d.url, d.status, String(d.attempts), d.lastStatusCode === null ? '-' : String(d.lastStatusCode), d.lastError ?? '-', d.createdAt]),
        ),
      );
    });
  webhooks
    .command('retry')
    .description('send a failed delivery again now')
    .argument('<id>', 'delivery id (coregate webhooks deliveries)')
    .addOption(dbOption())
    .action(async (id: string, flags: { db?: string; clock: Clock }) => {
      const { admin, withStore } = await actions(io.env);
      if (!(await withStore(flags.db, (store) => admin.retryDeliveryNow(store.db, id, flags.clock.now())))) throw new CommandError(`Delivery ${id} does not exist or was delivered already`);
      print(`Delivery ${id} is due now.`);
    });
}
