/**
 * The `coregate` command's program: every command, its flags and what it prints, on the streams and
 * the environment it is given (src/cli/command-io.ts). Built anew for each run: commander keeps a
 * parse's option values on its commands. The process entry is main.ts; run-command.ts runs it.
 */
import { Command, Option } from 'commander';
import { version } from '../version.js';
import { print as printTo, table, type CommandIo } from './command-io.js';
import { addWebhookCommands } from './webhook-commands.js';
import { addFapiCommands } from './fapi-commands.js';
import { addCoreConformanceCommand } from './core-conformance-command.js';
import type { CoreFlags } from './core-session.js';
import { addClientOptions, callOptions, clientFrom, readJsonFile, UsageError, type ClientFlags } from './client-commands.js';

/** Operator commands load the store layer and the server only when they run, so client commands start fast. */
const admin = () => import('./admin.js');
// The operator's toolkit on the store: the directory, customers and accounts, and what they hold.
const toolkit = () => import('./operator-toolkit.js');
// What the toolkit's `show` commands print for a person (--json prints the views themselves).
const descriptions = () => import('./bank-descriptions.js');

/** Ends a command with this exit code after it printed its outcome: a finding of `check` or `audit verify`, a declined reset. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export function coregateProgram(io: CommandIo): Command {
  const print = (value: unknown) => printTo(io, value);
  const program = new Command('coregate')
    .description('Banking integration service: auth service, business API and reference core banking system')
    .version(version, '-V, --version', 'print the version')
    .showHelpAfterError()
    // Commander ends with an exception instead of process.exit: run-command.ts turns it into the exit code.
    .exitOverride()
    // Unknown "--option=value" arguments are reported without their value, which may be a secret;
    // a secret never comes from a flag (shell history, process lists).
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => {
        const redacted = text.replace(/(unknown option '[^'=]*)=[^']*'/g, "$1=…'");
        const hint = /unknown option '--client-secret/.test(redacted)
          ? 'coregate: the client secret is never taken from a flag: set COREGATE_CLIENT_SECRET or answer the prompt\n'
          : '';
        write(redacted + hint);
      },
    });
  // Every command's flags carry the environment it reads its defaults and secrets from.
  program.hook('preAction', (_program, command) => {
    command.setOptionValue('env', io.env);
  });

  const dbOption = () => new Option('--db <url>', 'store: sqlite:PATH or postgres://... (env COREGATE_DB)');
  const realmOption = () => new Option('--realm <realm>', 'realm name (required)').makeOptionMandatory();
  const jsonOption = () => new Option('--json', 'print JSON for scripts');
  const coreUrlOption = () => new Option('--core-url <url>', 'a remote core (coregate core serve) answers, through its protocol (env COREGATE_CORE_URL); default: the embedded core on --db');

  program
    .command('serve')
    .description('run the service (auth service and business API on one port by default)')
    .option('--data <file>', 'sandbox data file to load (env COREGATE_DATA)')
    .option('--port <port>', 'port to listen on, 0 for any (env COREGATE_PORT, default 8080)')
    .option('--host <host>', 'address to bind (env COREGATE_HOST, default localhost)')
    .addOption(dbOption())
    .option('--public-url <url>', 'public base URL of the auth service, the tokens\' issuer prefix (env COREGATE_PUBLIC_URL)')
    .option('--business-date <date>', 'the business date of a new store, YYYY-MM-DD; then it moves by `coregate core advance` (env COREGATE_BUSINESS_DATE)')
    .option('--role <role>', 'all, auth or api (env COREGATE_ROLE, default all)')
    .option('--log-level <level>', 'pino log level (env COREGATE_LOG_LEVEL, default info)')
    .option('--core-timeout-ms <ms>', 'how long the API waits for the core before 504 (env COREGATE_CORE_TIMEOUT_MS, default 5000)')
    .option('--core-url <url>', 'a remote core (coregate core serve) instead of the embedded one (env COREGATE_CORE_URL)')
    .option('--duplicate-window <seconds>', 'duplicate window without x-correlation-id, 0 disables (env COREGATE_DUPLICATE_WINDOW_SECONDS, default 600)')
    .option('--core-batch-window <window>', 'UTC window HH:MM-HH:MM in which the core queues operations (202) (env COREGATE_CORE_BATCH_WINDOW)')
    .option('--trusted-issuer <url...>', 'external token issuers the API trusts, e.g. a Keycloak realm URL (env COREGATE_TRUSTED_ISSUERS, comma-separated)')
    .option('--rate-limit <n>', 'business API requests per second per client (shared through --redis-url); 0 disables (env COREGATE_RATE_LIMIT, default 0)')
    .option('--auth-failure-limit <n>', 'failed client authentications per client and source address in a window before 429; 0 disables (env COREGATE_AUTH_FAILURE_LIMIT, default 10)')
    .option('--auth-failure-window <seconds>', 'window of --auth-failure-limit; 0 disables (env COREGATE_AUTH_FAILURE_WINDOW_SECONDS, default 60)')
    .option('--redis-url <url>', 'Redis shared by every instance for the limits, redis:// or rediss:// (env COREGATE_REDIS_URL; default: limits per instance)')
    .option('--redis-key-prefix <prefix>', 'prefix of every Redis key (env COREGATE_REDIS_KEY_PREFIX, default coregate:)')
    .option('--tls-cert <file>', 'PEM certificate: serve HTTPS directly, TLS 1.2 or higher (env COREGATE_TLS_CERT)')
    .option('--tls-key <file>', 'PEM private key of --tls-cert (env COREGATE_TLS_KEY)')
    .option('--tls-client-ca <file>', 'PEM CA certificate(s) of TLS client certificates: asked for at the handshake (optional), for tls_client_auth and certificate-bound tokens (env COREGATE_TLS_CLIENT_CA)')
    .option('--client-certificate-header <name>', 'behind a TLS-terminating proxy: the header holding the client certificate (PEM, URL-encoded), believed from --trusted-proxy only (env COREGATE_CLIENT_CERTIFICATE_HEADER)')
    .option('--trusted-proxy <address...>', 'addresses of the proxies whose --client-certificate-header is believed (env COREGATE_TRUSTED_PROXIES, comma-separated)')
    .option('--reconcile-interval-ms <ms>', 'how often the reconciler settles unknown operations (env COREGATE_RECONCILE_INTERVAL_MS, default 2000)')
    .option('--unknown-age-limit <seconds>', 'an operation unknown longer is logged, counted and reported by check (env COREGATE_UNKNOWN_AGE_LIMIT_SECONDS, default 300)')
    .option('--audience <aud>', 'audience required of external issuers\' tokens (env COREGATE_AUDIENCE, default coregate-api)')
    .option('--metrics-port <port>', 'serve GET /metrics on this port (same host) instead of the main one, 0 for any (env COREGATE_METRICS_PORT)')
    .option('--workers <n>', 'processes serving the port, or auto for one per core (env COREGATE_WORKERS, default 1)')
    .option('--audit-spool <dir>', 'local directory where refused requests\' audit records are kept during a database outage until it is back; shared by the processes of one host (env COREGATE_AUDIT_SPOOL, default ./data/audit-spool)')
    .option('--sandbox', 'sandbox mode: operator API and console on, one-time console login URL in the banner, sandbox reset allowed (env COREGATE_SANDBOX)')
    .option('--operator-api', 'serve the operator API and the console (/operator/v1, /console) outside sandbox mode (env COREGATE_OPERATOR_API)')
    .option('--webhook-allow-private', 'webhooks may go to loopback and private addresses, for receivers on this machine or network; off by default, sandbox mode included (env COREGATE_WEBHOOK_ALLOW_PRIVATE)')
    .action(async (flags) => (await import('./serve.js')).serve(flags));

  const core = program.command('core').description('the reference core banking system: its own service, its business date');
  core
    .command('serve')
    .description('serve the reference core over the remote core protocol (no auth: private network or mTLS only)')
    .option('--port <port>', 'port to listen on, 0 for any (env COREGATE_CORE_PORT, default 8081)')
    .option('--host <host>', 'address to bind (env COREGATE_CORE_HOST, default localhost)')
    .option('--db <url>', 'the core\'s own store: sqlite:PATH or postgres://... (env COREGATE_CORE_DB, default sqlite:./data/core.db)')
    .option('--data <file>', 'sandbox data file whose core sections to load (env COREGATE_CORE_DATA)')
    .option('--business-date <date>', 'the business date of a new store, YYYY-MM-DD; then it moves by `coregate core advance` (env COREGATE_CORE_BUSINESS_DATE)')
    .option('--log-level <level>', 'pino log level (env COREGATE_LOG_LEVEL, default info)')
    .action(async (flags) => (await import('./core-serve.js')).serveCore(flags));
  core
    .command('advance')
    .description('advance the core\'s business date, running end of day once for every business day passed (docs/business-days.md); resumable, never backwards')
    .requiredOption('--to <date>', 'the new business date, YYYY-MM-DD')
    .addOption(dbOption())
    .option('--core-url <url>', 'a remote core (coregate core serve) runs it (env COREGATE_CORE_URL); default: the embedded core on --db')
    .addOption(jsonOption())
    .action(async (flags) => {
      const advance = await import('./core-advance.js');
      const report = await advance.coreAdvance(flags);
      print(flags.json ? report : advance.describeAdvance(report));
    });
  core
    .command('date')
    .description('print the core\'s business date')
    .addOption(dbOption())
    .option('--core-url <url>', 'ask a remote core (env COREGATE_CORE_URL); default: the embedded core on --db')
    .addOption(jsonOption())
    .action(async (flags) => {
      const { businessDate } = await (await import('./core-advance.js')).coreDate(flags);
      print(flags.json ? { businessDate } : businessDate);
    });
  addCoreConformanceCommand(core, io, (code) => {
    throw new ExitCode(code);
  });

  const clients = program.command('clients').description('onboard and manage OAuth clients');
  clients
    .command('create')
    .description('create a client; a secret client\'s generated secret is printed once')
    .addOption(realmOption())
    .requiredOption('--client-id <id>', 'client id')
    .requiredOption('--scopes <scopes...>', 'granted scopes (space- or comma-separated)')
    .option('--technical-user <login>', 'user associated when a token request sends no username')
    .option('--default-workstation <id>', 'workstation used when a token request sends none')
    .option('--create-missing', 'add the technical user and default workstation to the directory (Active) when they are not in it')
    .option('--auth-method <method>', 'client_secret_basic (default: a generated secret), private_key_jwt or tls_client_auth (CONTRACT §13)')
    .option('--jwks <file>', 'private_key_jwt: the client\'s public keys, a JWK set {"keys": [...]}, one JWK, or a PEM public key (its kid: the RFC 7638 thumbprint); no private member')
    .option('--tls-subject-dn <dn>', 'tls_client_auth: the subject DN of the client\'s certificate (RFC 4514, e.g. "CN=app,O=Bank,C=DE")')
    .option('--dpop', 'its tokens are DPoP-bound: a DPoP proof is required at the token endpoint')
    .option('--certificate-bound', 'its tokens are bound to its TLS client certificate')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const { clientId, secret, created, authMethod } = await (await admin()).createClient(flags);
      const shown = secret === undefined ? { clientId, tokenEndpointAuthMethod: authMethod } : { clientId, clientSecret: secret };
      if (flags.json) return print(created.length > 0 ? { ...shown, created } : shown);
      for (const entry of created) print(`Added ${entry} to the directory (Active).`);
      if (secret === undefined) print(`Client ${clientId} created in realm ${flags.realm} (${authMethod}${flags.dpop ? ', DPoP-bound tokens' : ''}${flags.certificateBound ? ', certificate-bound tokens' : ''}).`);
      else print(`Client ${clientId} created in realm ${flags.realm}.\nclient_secret: ${secret}\nStore it now: it is shown only once.`);
    });
  clients
    .command('rotate-secret')
    .description('replace a client\'s secret and print the new one once; the tokens obtained with the old one are refused within a second')
    .addOption(realmOption())
    .requiredOption('--client-id <id>', 'client id')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const secret = await (await admin()).rotateClientSecret(flags);
      if (flags.json) return print({ clientId: flags.clientId, clientSecret: secret });
      print(`New secret for ${flags.clientId} (the old one no longer works).\nclient_secret: ${secret}\nStore it now: it is shown only once.`);
    });
  for (const [name, enabled] of [['disable', false], ['enable', true]] as const) {
    clients
      .command(name)
      .description(
        enabled
          ? 'enable a client: it can obtain tokens again (the tokens it held when disabled stay refused)'
          : 'disable a client: its token requests fail, and the tokens it holds are refused within a second',
      )
      .addOption(realmOption())
      .requiredOption('--client-id <id>', 'client id')
      .addOption(dbOption())
      .action(async (flags) => {
        await (await admin()).setClientState(flags, enabled);
        print(`Client ${flags.clientId} ${enabled ? 'enabled' : 'disabled'}.`);
      });
  }
  clients
    .command('revoke-tokens')
    .description('refuse every token one client holds (within a second, on every instance); the realm\'s other clients keep theirs, and its new tokens work')
    .addOption(realmOption())
    .requiredOption('--client-id <id>', 'client id')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const notBefore = await (await admin()).revokeClientTokensCommand(flags);
      if (flags.json) return print({ realm: flags.realm, clientId: flags.clientId, tokensNotBefore: notBefore });
      print(`Tokens of client ${flags.clientId} issued before ${new Date(notBefore * 1000).toISOString()} are now refused (client not-before ${notBefore}).`);
    });
  clients
    .command('set-keys')
    .description('replace a private_key_jwt client\'s public keys; the tokens obtained with the old ones are refused within a second')
    .addOption(realmOption())
    .requiredOption('--client-id <id>', 'client id')
    .requiredOption('--jwks <file>', 'the client\'s new public keys, as clients create takes them: a JWK set {"keys": [...]}, one JWK, or a PEM public key (its kid: the RFC 7638 thumbprint); no private member')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const result = await (await admin()).setClientKeys(flags);
      if (flags.json) return print({ realm: flags.realm, ...result });
      print(`Client ${result.clientId} now authenticates with key${result.kids.length === 1 ? '' : 's'} ${result.kids.join(', ')}; its tokens issued before ${new Date(result.tokensNotBefore * 1000).toISOString()} are refused.`);
    });
  clients
    .command('list')
    .description('list a realm\'s clients (never their secrets)')
    .addOption(realmOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await admin()).describeClients(flags);
      if (flags.json) return print(rows);
      print(
        table(
          ['CLIENT ID', 'ENABLED', 'SCOPES', 'TECHNICAL USER', 'DEFAULT WORKSTATION'],
          rows.map((c) => [c.clientId, String(c.enabled), c.scopes.join(' '), c.technicalUser ?? '-', c.defaultWorkstation ?? '-']),
        ),
      );
    });

  const keys = program.command('keys').description('manage realm signing keys');
  keys
    .command('rotate')
    .description('add a new active signing key; the old one stays in the JWKS until its tokens expire')
    .addOption(realmOption())
    .addOption(new Option('--alg <alg>', 'algorithm of the new key (default: the realm\'s)').choices(['RS256', 'ES256', 'EdDSA']))
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const kid = await (await admin()).rotateKeys(flags);
      if (flags.json) return print({ realm: flags.realm, kid });
      print(`Realm ${flags.realm} now signs with key ${kid}.`);
    });
  keys
    .command('list')
    .description('list a realm\'s signing keys (public metadata only)')
    .addOption(realmOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await admin()).describeKeys(flags);
      if (flags.json) return print(rows);
      print(table(['KID', 'ALG', 'STATUS', 'CREATED', 'RETIRED'], rows.map((k) => [k.kid, k.alg, k.status, k.createdAt, k.retiredAt ?? '-'])));
    });

  // The core's two directories: the same two commands each, on the entry's key (login, id).
  const directories = [
    {
      name: 'users', noun: 'User', key: 'login', column: 'LOGIN', description: 'the core\'s directory of users (backbone_user)',
      add: async (key: string, flags: CoreFlags & { status?: string }) => {
        const result = await (await toolkit()).addUser({ ...flags, login: key });
        return { result, status: result.status, added: result.added };
      },
      list: async (flags: CoreFlags) => (await (await toolkit()).listUsers(flags)).map((row) => ({ row, key: row.login, status: row.status })),
    },
    {
      name: 'workstations', noun: 'Workstation', key: 'id', column: 'ID', description: 'the core\'s directory of workstations',
      add: async (key: string, flags: CoreFlags & { status?: string }) => {
        const result = await (await toolkit()).addWorkstation({ ...flags, id: key });
        return { result, status: result.status, added: result.added };
      },
      list: async (flags: CoreFlags) => (await (await toolkit()).listWorkstations(flags)).map((row) => ({ row, key: row.id, status: row.status })),
    },
  ];
  for (const directory of directories) {
    const command = program.command(directory.name).description(directory.description);
    command
      .command('add')
      .description(`add a ${directory.noun.toLowerCase()} (Active unless --status); an existing one is left as it is`)
      .argument(`<${directory.key}>`)
      .option('--status <status>', 'Active, Disabled or Blocked')
      .addOption(dbOption())
      .addOption(coreUrlOption())
      .addOption(jsonOption())
      .action(async (key: string, flags) => {
        const { result, status, added } = await directory.add(key, flags);
        if (flags.json) return print(result);
        print(added ? `${directory.noun} ${key} added (${status}).` : `${directory.noun} ${key} already exists (${status}): left as it is.`);
      });
    command
      .command('list')
      .description(`list the directory's ${directory.name}`)
      .addOption(dbOption())
      .addOption(coreUrlOption())
      .addOption(jsonOption())
      .action(async (flags) => {
        const entries = await directory.list(flags);
        if (flags.json) return print(entries.map((entry) => entry.row));
        print(table([directory.column, 'STATUS'], entries.map((entry) => [entry.key, entry.status])));
      });
  }
  const customers = program.command('customers').description('the reference core\'s customers');
  customers
    .command('add')
    .description('add a customer')
    .requiredOption('--customer <reference>', 'customer reference, e.g. C0003')
    .option('--name <name>', 'the customer\'s name')
    .option('--status <status>', 'Active (default), Blocked, Closed or Inactive')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const result = await (await toolkit()).addCustomer(flags);
      if (flags.json) return print(result);
      print(`Customer ${result.customerReference} (${result.name}) added, ${result.status}.`);
    });
  customers
    .command('list')
    .description('list customers with their number of accounts')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await toolkit()).listCustomerRows(flags);
      if (flags.json) return print(rows);
      print(table(['CUSTOMER', 'NAME', 'STATUS', 'ACCOUNTS'], rows.map((row) => [row.customerReference, row.name ?? '', row.status, String(row.accounts)])));
    });
  const accounts = program.command('accounts').description('the reference core\'s customer accounts');
  accounts
    .command('add')
    .description('open an account with an opening balance (posted against the bank\'s equity, as the data file does)')
    .requiredOption('--account <number>', 'account number')
    .requiredOption('--customer <reference>', 'the owning customer')
    .requiredOption('--currency <code>', 'ISO 4217 currency, e.g. USD')
    .option('--balance <amount>', 'opening balance as a decimal, e.g. 1500.00 (default 0)')
    .option('--status <status>', 'Active (default), Blocked, Closed or Inactive')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const account = await (await toolkit()).addAccount(flags);
      if (flags.json) return print(account);
      print(`Account ${account?.accountNumber} of ${account?.customerReference} opened: ${account?.balance.amount} ${account?.currency}.`);
    });
  accounts
    .command('list')
    .description('list customer accounts with their live balances')
    .option('--customer <reference>', 'only this customer\'s')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await toolkit()).listAccountRows(flags);
      if (flags.json) return print(rows);
      print(table(['ACCOUNT', 'CUSTOMER', 'STATUS', 'BALANCE'], rows.map((row) => [row.accountNumber, row.customerReference ?? '', row.status, `${row.balance.amount} ${row.currency}`])));
    });
  accounts
    .command('show')
    .description('an account\'s balance and its latest postings')
    .argument('<accountNumber>')
    .option('--limit <n>', 'postings to show (default 20)')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (account: string, flags) => {
      const shown = await (await toolkit()).showAccount({ ...flags, account });
      if (flags.json) return print(shown);
      print((await descriptions()).describeAccount(shown));
    });
  program
    .command('term-deposits')
    .description('the reference core\'s term deposits')
    .command('show')
    .description('a term deposit as the core keeps it, with its expected interest and status')
    .argument('<termDepositAccount>')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (contract: string, flags) => {
      const deposit = await (await toolkit()).showTermDeposit({ ...flags, contract });
      print(flags.json ? deposit : (await descriptions()).describeTermDeposit(deposit));
    });
  program
    .command('facilities')
    .description('the reference core\'s loan facilities')
    .command('show')
    .description('a loan facility: installments, outstanding, limit used')
    .argument('<merchandisingLoanId>')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .addOption(jsonOption())
    .action(async (loanId: string, flags) => {
      const facility = await (await toolkit()).showFacility({ ...flags, loanId });
      print(flags.json ? facility : (await descriptions()).describeFacility(facility));
    });

  const realms = program.command('realms').description('manage realms');
  realms
    .command('revoke-tokens')
    .description('set the realm\'s not-before to now: every token issued earlier is refused')
    .addOption(realmOption())
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const notBefore = await (await admin()).revokeRealmTokens(flags);
      if (flags.json) return print({ realm: flags.realm, notBefore });
      print(`Tokens of realm ${flags.realm} issued before ${new Date(notBefore * 1000).toISOString()} are now refused (not-before-policy ${notBefore}).`);
    });
  realms
    .command('add')
    .description('create a realm with its first signing key (its clients: coregate clients create)')
    .addOption(realmOption())
    .option('--audience <aud>', 'the audience of its tokens (default coregate-api, the API\'s own)')
    .option('--lifespan <seconds>', 'access token lifespan (default 300)')
    .option('--alg <alg>', 'RS256 (default; PS256 with --profile fapi2), PS256, ES256 or EdDSA')
    .option('--profile <profile>', 'fapi2: private_key_jwt or tls_client_auth clients and sender-constrained tokens only (CONTRACT §13)')
    .option('--dpop-nonce', 'DPoP proofs at the token endpoint need a server nonce (RFC 9449 §8)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const realm = await (await admin()).createRealm(flags);
      if (flags.json) return print(realm);
      const profile = realm.profile === null ? '' : `, profile ${realm.profile}${realm.dpopNonce ? ', DPoP nonces' : ''}`;
      print(`Realm ${realm.name} created (audience ${realm.audience}, tokens for ${realm.accessTokenLifespanSeconds} s, ${realm.signatureAlgorithm}${profile}). Token endpoint: /realms/${realm.name}/protocol/openid-connect/token`);
    });
  realms
    .command('list')
    .description('list realms')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const rows = await (await admin()).describeRealms(flags);
      if (flags.json) return print(rows);
      print(
        table(
          ['REALM', 'AUDIENCE', 'LIFESPAN S', 'ALG', 'NOT BEFORE'],
          rows.map((r) => [r.name, r.audience, String(r.accessTokenLifespanSeconds), r.signatureAlgorithm, String(r.notBefore)]),
        ),
      );
    });

  program
    .command('check')
    .description('prove the ledger balances, every executed operation has its postings and audit record, none stayed unknown past the age limit, and the audit chain is valid (exit 1 on any finding)')
    .addOption(dbOption())
    .addOption(coreUrlOption())
    .option('--core-db <url>', 'the reference core\'s own database, when you hold it (prefer --core-url: a bank\'s core never hands out its database)')
    .option('--unknown-age-limit <seconds>', 'an operation unknown or in flight longer is a finding (env COREGATE_UNKNOWN_AGE_LIMIT_SECONDS, default 300)')
    .addOption(jsonOption())
    .action(async (flags) => {
      const report = await (await admin()).checkStore(flags);
      if (flags.json) print(report);
      else print((await import('./check.js')).describeReport(report));
      if (!report.ok) throw new ExitCode(1);
    });

  program
    .command('console')
    .description('print a one-time URL that logs in to the console (/console); it works once, within 10 minutes, and opens an 8-hour session')
    .addOption(dbOption())
    .option('--url <base>', 'the service\'s base URL as the browser reaches it (env COREGATE_PUBLIC_URL, default http://localhost:8080)')
    .addOption(jsonOption())
    .action(async (flags) => {
      const login = await (await import('./console-command.js')).consoleCommand(flags);
      if (flags.json) return print(login);
      print(`Open this URL to log in to the console (once, before ${login.expiresAt}):\n  ${login.url}`);
    });

  const audit = program.command('audit').description('the hash-chained audit trail');
  audit
    .command('verify')
    .description('verify every link of the audit chain (exit 1 when a record was altered, removed or reordered)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const result = await (await admin()).verifyAudit(flags);
      if (flags.json) print(result);
      else if (result.ok) print(`Audit chain OK: ${result.chained} records verified.`);
      else print(`Audit chain BROKEN at position ${result.problem?.chainSeq} (record ${result.problem?.id}): ${result.problem?.issue}.`);
      if (!result.ok) throw new ExitCode(1);
    });
  audit
    .command('export')
    .description('print every audit record as JSON lines, in chain order')
    .addOption(dbOption())
    .action(async (flags) => {
      await (await admin()).exportAuditLines(flags, (line) => io.stdout.write(line));
    });

  // The CLI as a client of a running server (SDK).
  addClientOptions(program.command('token').description('print an access token for the client (and session)'))
    .option('--scope <scopes>', 'narrow the token to these scopes (space-separated)')
    .action(async (flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const token = await client.token(identity);
      if (flags.json) print({ access_token: token, token_type: 'Bearer' });
      else print(token);
    });

  const termDeposit = program.command('term-deposit').description('term deposits (client of a running server)');
  addClientOptions(termDeposit.command('initiate').description('constitute a term deposit from a JSON request body'))
    .option('--file <file>', 'the request body (JSON; - for standard input)')
    .option('--correlation-id <id>', 'x-correlation-id; by default one per call, kept across its retries, and the same request repeated within the duplicate window is refused (409): give your own id for a deliberate repeat')
    .option('--async', 'Prefer: respond-async (answer 202, then poll operations get)')
    .action(async (flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const outcome = await client.session(identity).termDeposits.initiate((await readJsonFile(flags.file, io)) as never, callOptions(flags));
      if (flags.json) return print(outcome.status === 202 ? outcome.accepted : outcome.result);
      if (outcome.status === 202) return print(`Accepted (pending): operation ${outcome.reference}. Check it with: coregate operations get ${outcome.reference}`);
      const deposit = outcome.result as { termDepositAccount: string; principalAmount: { amountValue: number; amountCurrency: { currencycode: string } }; termDepositPeriod: { maturityDate: string; numberOfDays: number }; operationReference: string };
      print(
        `Term deposit ${deposit.termDepositAccount} constituted: ${deposit.principalAmount.amountValue} ${deposit.principalAmount.amountCurrency.currencycode}, ` +
          `maturity ${deposit.termDepositPeriod.maturityDate} (${deposit.termDepositPeriod.numberOfDays} days), operation ${deposit.operationReference}`,
      );
    });
  addClientOptions(termDeposit.command('retrieve').description('show a term deposit').argument('<termDepositId>'))
    .action(async (termDepositId: string, flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const { result: deposit } = await client.session(identity).termDeposits.retrieve(termDepositId);
      if (flags.json) return print(deposit);
      print(
        `Term deposit ${deposit.termDepositAccount} (${deposit.termDepositStatus}) of customer ${deposit.customerReference}\n` +
          `  principal ${deposit.principalAmount.amountValue} ${deposit.principalAmount.amountCurrency.currencycode} at ${deposit.interestRate.rateValue} %\n` +
          `  ${deposit.valueDate} → ${deposit.termDepositPeriod.maturityDate} (${deposit.termDepositPeriod.numberOfDays} days)\n` +
          `  interest expected at maturity ${deposit.expectedInterestAmount.amountValue} ${deposit.expectedInterestAmount.amountCurrency.currencycode}`,
      );
    });

  const loan = program.command('loan').description('merchandising loans (client of a running server)');
  addClientOptions(loan.command('execute').description('pay one installment from a JSON request body').argument('<merchandisingLoanId>').argument('<installmentSequence>'))
    .option('--file <file>', 'the request body (JSON; - for standard input)')
    .option('--correlation-id <id>', 'x-correlation-id; by default one per call, kept across its retries, and the same request repeated within the duplicate window is refused (409): give your own id for a deliberate repeat')
    .option('--async', 'Prefer: respond-async')
    .option('--minimal', 'Prefer: return=minimal (204 on success)')
    .action(async (loanId: string, sequence: string, flags: ClientFlags) => {
      if (!/^[1-9][0-9]*$/.test(sequence)) throw new UsageError('installmentSequence must be a positive integer');
      const { client, identity } = await clientFrom(flags, io);
      const outcome = await client.session(identity).merchandisingLoans.executeInstallment(loanId, Number(sequence), (await readJsonFile(flags.file, io)) as never, callOptions(flags));
      if (flags.json) return print(outcome.status === 202 ? outcome.accepted : (outcome.result ?? { status: 204 }));
      if (outcome.status === 202) return print(`Accepted (pending): execution ${outcome.reference}. Check it with: coregate operations get ${outcome.reference}`);
      if (outcome.status === 204) return print('Installment paid (no content requested).');
      print(`Installment ${sequence} of ${loanId}: ${outcome.result.merchandisingLoanFacilityStatus}, operation ${outcome.result.merchandisingLoanOperationId}, execution ${outcome.result.executionReference} at ${outcome.result.executionDateTime}`);
    });

  addClientOptions(program.command('operations').description('business operations: their state and outcome (client of a running server)').command('get').description('state of an operation (e.g. after a 202)').argument('<reference>'))
    .action(async (reference: string, flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const { result: view } = await client.session(identity).operations.get(reference);
      if (flags.json) return print(view);
      print(`Operation ${view.reference} (${view.operation}): ${view.status}${view.error ? ` — ${view.error.status} ${view.error.message}` : ''}`);
      if (view.result !== undefined) print(JSON.stringify(view.result, null, 2));
    });

  addWebhookCommands(program, io);
  addFapiCommands(program, io);
  const sandbox = program.command('sandbox').description('the integration sandbox (docs/sandbox.md)');
  sandbox
    .command('reset')
    .description('empty the store and load the data file again, as a new sandbox (asks first; --yes without a terminal)')
    .addOption(new Option('--data <file>', 'the sandbox data file to load').makeOptionMandatory())
    .addOption(coreUrlOption())
    .option('--yes', 'do not ask for confirmation')
    .option('--webhook-allow-private', 'the file\'s webhook endpoints may name loopback and private addresses, as serve\'s flag (env COREGATE_WEBHOOK_ALLOW_PRIVATE)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const commands = await import('./sandbox-commands.js');
      const summary = await commands.sandboxReset(flags, io);
      if (!summary) {
        io.stderr.write('coregate: sandbox reset cancelled, nothing changed\n');
        throw new ExitCode(2);
      }
      if (flags.json) return print(summary);
      print(commands.describeReset(summary));
    });

  return program;
}
