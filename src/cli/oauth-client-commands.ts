/**
 * `coregate clients create|rotate-secret|disable|enable|revoke-tokens|set-keys|list`: onboarding
 * and managing a realm's OAuth clients on the store (docs/auth.md). A generated secret is printed
 * once. The work is admin.ts, loaded when a command runs.
 */
import type { Command } from 'commander';
import { printerOf, table, type CommandIo, type Printer } from './command-io.js';
import { coreUrlOption, dbOption, jsonOption, realmOption } from './common-options.js';

/** The operator commands' work, loaded when one runs: client commands start without the store layer. */
const admin = () => import('./admin.js');

export function addOauthClientCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const clients = program.command('clients').description('onboard and manage OAuth clients');
  addCreateCommand(clients, print);
  addRotateSecretCommand(clients, print);
  addEnableCommands(clients, print);
  addRevokeTokensCommand(clients, print);
  addSetKeysCommand(clients, print);
  addListCommand(clients, print);
}

function addCreateCommand(clients: Command, print: Printer): void {
  clients
    .command('create')
    .description('create a client; a secret client\'s generated secret is printed once')
    .addOption(realmOption())
    .requiredOption('--client-id <id>', 'client id')
    .requiredOption('--scopes <scopes...>', 'granted scopes (space- or comma-separated)')
    .option('--technical-user <login>', 'user associated when a token request sends no username')
    .option('--default-workstation <id>', 'workstation used when a token request sends none')
    .option('--create-missing', 'add the technical user and default workstation to the directory (Active) when they are not in it')
    .option('--auth-method <method>', 'client_secret_basic (default: a generated secret), private_key_jwt or tls_client_auth (docs/auth.md)')
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
}

function addRotateSecretCommand(clients: Command, print: Printer): void {
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
}

/** `disable` and `enable`: one command each, the same flags. */
function addEnableCommands(clients: Command, print: Printer): void {
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
}

function addRevokeTokensCommand(clients: Command, print: Printer): void {
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
}

function addSetKeysCommand(clients: Command, print: Printer): void {
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
}

function addListCommand(clients: Command, print: Printer): void {
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
}
