/**
 * `coregate fapi assertion|proof`: what a FAPI 2.0 client signs (docs/auth.md, "The SDK and the
 * CLI"), printed, so that an integration team can call coregate with curl before its own client is
 * written (docs/auth.md, "Onboarding a FAPI 2.0 client"): a client assertion for the token request
 * (`private_key_jwt`) and a DPoP proof for one request. Signed through jose (src/sdk), loaded when
 * one of them runs.
 */
import type { Command } from 'commander';
import { CommandError } from './command-error.js';
import { printerOf, type CommandContext, type CommandIo, type Printer } from './command-io.js';
import { KeyFileError, readPrivateKey } from './key-file.js';

/** `env`: COREGATE_CLIENT_ID, COREGATE_REALM, COREGATE_AUTH_URL; `clock`: the time the assertion and the proof are issued at. */
type FapiFlags = CommandContext;

function keyFrom(flag: string, file: string) {
  try {
    return readPrivateKey(flag, file);
  } catch (error) {
    if (error instanceof KeyFileError) throw new CommandError(error.message);
    throw error;
  }
}

export function addFapiCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  const fapi = program.command('fapi').description('sign what a FAPI 2.0 client sends: client assertions and DPoP proofs (docs/auth.md)');
  addAssertionCommand(fapi, print);
  addProofCommand(fapi, print);
}

function addAssertionCommand(fapi: Command, print: Printer): void {
  fapi
    .command('assertion')
    .description('print a client assertion (private_key_jwt, valid 60 s, used once) for a token request')
    .requiredOption('--private-key <file>', 'the client\'s private key: PEM or a private JWK')
    .option('--key-id <kid>', 'the kid of its registered public key (default: the JWK\'s own; a PEM key registered from its public PEM: its thumbprint)')
    .option('--client-id <id>', 'client id (env COREGATE_CLIENT_ID)')
    .option('--realm <realm>', 'realm (env COREGATE_REALM, default sandbox)')
    .option('--auth-url <url>', 'auth service base URL (env COREGATE_AUTH_URL, else COREGATE_URL, default http://localhost:8080)')
    .action(async (flags: FapiFlags & { privateKey: string; keyId?: string; clientId?: string; realm?: string; authUrl?: string }) => {
      const clientId = flags.clientId ?? flags.env.COREGATE_CLIENT_ID;
      if (!clientId) throw new CommandError('the client id is required: --client-id or COREGATE_CLIENT_ID');
      const { key, alg, kid } = keyFrom('--private-key', flags.privateKey);
      const authUrl = (flags.authUrl ?? flags.env.COREGATE_AUTH_URL ?? flags.env.COREGATE_URL ?? 'http://localhost:8080').replace(/\/+$/, '');
      const issuer = `${authUrl}/realms/${encodeURIComponent(flags.realm ?? flags.env.COREGATE_REALM ?? 'sandbox')}`;
      const chosenKid = flags.keyId ?? kid ?? (await publicThumbprint(key));
      const { clientAssertion } = await import('../sdk/proof-of-possession.js');
      print(await clientAssertion(clientId, issuer, { key, alg, kid: chosenKid }, flags.clock.now()));
    });
}

function addProofCommand(fapi: Command, print: Printer): void {
  fapi
    .command('proof')
    .description('print a DPoP proof (RFC 9449) for one request: a new one for every request')
    .requiredOption('--key <file>', 'the DPoP private key: PEM or a private JWK (EC P-256, RSA or Ed25519)')
    .requiredOption('--method <method>', 'the request\'s method, e.g. POST')
    .requiredOption('--url <url>', 'the request\'s URL (its query is left out of the proof)')
    .option('--access-token <token>', 'the DPoP-bound access token sent with it (the proof\'s ath)')
    .option('--nonce <nonce>', 'the DPoP-Nonce the server asked for')
    .action(async (flags: FapiFlags & { key: string; method: string; url: string; accessToken?: string; nonce?: string }) => {
      const { key, alg } = keyFrom('--key', flags.key);
      if (!/^https?:\/\//.test(flags.url)) throw new CommandError(`--url must be an http(s) URL, got "${flags.url}"`);
      const { DpopKey } = await import('../sdk/proof-of-possession.js');
      const dpop = await DpopKey.fromPrivateKey(key, alg);
      print(await dpop.proof(flags.method.toUpperCase(), flags.url, flags.clock.now(), { accessToken: flags.accessToken, nonce: flags.nonce }));
    });
}

/** The RFC 7638 thumbprint of a private key's public half: the kid `clients create --jwks PUBLIC.pem` registers. */
async function publicThumbprint(key: import('node:crypto').KeyObject): Promise<string> {
  const { createPublicKey } = await import('node:crypto');
  const { thumbprint } = await import('./key-file.js');
  return thumbprint(createPublicKey(key).export({ format: 'jwk' }) as Record<string, string>);
}
