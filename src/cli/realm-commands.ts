/**
 * `coregate realms revoke-tokens|add|list`: realms on the store, each created with its first
 * signing key. The work is admin.ts, loaded when a command runs.
 */
import type { Command } from 'commander';
import { printerOf, table, type CommandIo, type Printer } from './command-io.js';
import { dbOption, jsonOption, realmOption } from './common-options.js';

const admin = () => import('./admin.js');

export function addRealmCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const realms = program.command('realms').description('manage realms');
  addRevokeTokensCommand(realms, print);
  addCreateRealmCommand(realms, print);
  addListCommand(realms, print);
}

function addRevokeTokensCommand(realms: Command, print: Printer): void {
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
}

function addCreateRealmCommand(realms: Command, print: Printer): void {
  realms
    .command('add')
    .description('create a realm with its first signing key (its clients: coregate clients create)')
    .addOption(realmOption())
    .option('--audience <aud>', 'the audience of its tokens (default coregate-api, the API\'s own)')
    .option('--lifespan <seconds>', 'access token lifespan (default 300)')
    .option('--alg <alg>', 'RS256 (default; PS256 with --profile fapi2), PS256, ES256 or EdDSA')
    .option('--profile <profile>', 'fapi2: private_key_jwt or tls_client_auth clients and sender-constrained tokens only (docs/auth.md)')
    .option('--dpop-nonce', 'DPoP proofs at the token endpoint need a server nonce (RFC 9449 §8)')
    .addOption(dbOption())
    .addOption(jsonOption())
    .action(async (flags) => {
      const realm = await (await admin()).createRealm(flags);
      if (flags.json) return print(realm);
      const profile = realm.profile === null ? '' : `, profile ${realm.profile}${realm.dpopNonce ? ', DPoP nonces' : ''}`;
      print(`Realm ${realm.name} created (audience ${realm.audience}, tokens for ${realm.accessTokenLifespanSeconds} s, ${realm.signatureAlgorithm}${profile}). Token endpoint: /realms/${realm.name}/protocol/openid-connect/token`);
    });
}

function addListCommand(realms: Command, print: Printer): void {
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
}
