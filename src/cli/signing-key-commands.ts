/**
 * `coregate keys rotate|list`: a realm's signing keys on the store (public metadata only). The
 * work is admin.ts, loaded when a command runs.
 */
import { Option, type Command } from 'commander';
import { printerOf, table, type CommandIo } from './command-io.js';
import { dbOption, jsonOption, realmOption } from './common-options.js';

const admin = () => import('./admin.js');

export function addSigningKeyCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
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
}
