/**
 * The CLI as a client of a running coregate, through the SDK. URLs and the client id come from
 * flags or the environment; the secret only from COREGATE_CLIENT_SECRET or a hidden prompt,
 * never from a flag (flags end up in shell history and process lists).
 */
import { KeyFileError, readPrivateKey } from './key-file.js';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { readInput, type CommandEnv, type CommandIo } from './command-io.js';
import { parseNamedJson, readNamedFile } from './named-file.js';
import { CoregateApiError, CoregateAuthError, CoregateClient, type CallOptions, type ClientPrivateKey, type SessionIdentity } from '../sdk/index.js';

export interface ClientFlags {
  url?: string;
  authUrl?: string;
  realm?: string;
  clientId?: string;
  username?: string;
  workstation?: string;
  json?: boolean;
  correlationId?: string;
  async?: boolean;
  minimal?: boolean;
  file?: string;
  scope?: string;
  timeoutMs?: string;
  /** FAPI 2.0 (CONTRACT §13): the client's private key file (PEM PKCS#8 or a JWK), its kid, DPoP-bound tokens. */
  privateKey?: string;
  keyId?: string;
  dpop?: boolean;
  /** The command's environment (COREGATE_URL, COREGATE_CLIENT_ID, COREGATE_CLIENT_SECRET): src/cli/command-io.ts. */
  env: CommandEnv;
}

export function addClientOptions(command: Command): Command {
  return command
    .option('--url <url>', 'business API base URL (env COREGATE_URL, default http://localhost:8080)')
    .option('--auth-url <url>', 'auth service base URL (env COREGATE_AUTH_URL, default: --url)')
    .option('--realm <realm>', 'realm (env COREGATE_REALM, default sandbox)')
    .option('--client-id <id>', 'client id (env COREGATE_CLIENT_ID); the secret comes from COREGATE_CLIENT_SECRET or a prompt')
    .option('--private-key <file>', 'private_key_jwt instead of a secret: the client\'s private key, PEM (PKCS#8) or a JWK (env COREGATE_CLIENT_PRIVATE_KEY)')
    .option('--key-id <kid>', 'the kid of the client\'s registered public key (env COREGATE_CLIENT_KEY_ID; default: the JWK\'s own)')
    .option('--dpop', 'DPoP-bound tokens: a key pair for the session, a proof with every call (env COREGATE_DPOP=true)')
    .option('--username <login>', 'user of the session (token claim backbone_user)')
    .option('--workstation <id>', 'workstation of the session')
    .option('--timeout-ms <ms>', 'per-call time-out')
    .option('--json', 'print JSON for scripts');
}

export async function clientFrom(flags: ClientFlags, io: CommandIo): Promise<{ client: CoregateClient; identity: SessionIdentity }> {
  const env = flags.env;
  const clientId = flags.clientId ?? env.COREGATE_CLIENT_ID;
  if (!clientId) throw new UsageError('the client id is required: --client-id or COREGATE_CLIENT_ID');
  const keyFile = flags.privateKey ?? env.COREGATE_CLIENT_PRIVATE_KEY;
  // A refused key file is named by where it came from: the flag, or the variable a shell may have set long ago.
  const keySource = flags.privateKey === undefined ? 'COREGATE_CLIENT_PRIVATE_KEY' : '--private-key';
  const privateKey = keyFile === undefined || keyFile === '' ? undefined : clientPrivateKey(keySource, keyFile, flags.keyId ?? env.COREGATE_CLIENT_KEY_ID);
  // A private key replaces the secret: none is asked for.
  const clientSecret = privateKey !== undefined ? undefined : env.COREGATE_CLIENT_SECRET || (await promptSecret(io, `client_secret for ${clientId}: `));
  const baseUrl = flags.url ?? env.COREGATE_URL ?? 'http://localhost:8080';
  const client = new CoregateClient({
    baseUrl,
    authUrl: flags.authUrl ?? env.COREGATE_AUTH_URL ?? baseUrl,
    realm: flags.realm ?? env.COREGATE_REALM ?? 'sandbox',
    clientId,
    ...(clientSecret === undefined ? {} : { clientSecret }),
    ...(privateKey === undefined ? {} : { privateKey }),
    ...(flags.dpop === true || env.COREGATE_DPOP === 'true' ? { dpop: true } : {}),
    ...(flags.timeoutMs ? { timeoutMs: Number(flags.timeoutMs) } : {}),
  });
  const identity: SessionIdentity = {};
  if (flags.username) identity.username = flags.username;
  if (flags.workstation) identity.workstation = flags.workstation;
  if (flags.scope) identity.scope = flags.scope;
  return { client, identity };
}

export class UsageError extends Error {}

/** The client's private key from a file (PEM or a private JWK), with its algorithm: EC P-256 ES256, RSA PS256, Ed25519 EdDSA. */
function clientPrivateKey(source: string, file: string, keyId: string | undefined): ClientPrivateKey {
  try {
    const { key, alg, kid } = readPrivateKey(source, file);
    const chosenKid = keyId ?? kid;
    return { key, alg, ...(chosenKid === undefined ? {} : { kid: chosenKid }) };
  } catch (error) {
    if (error instanceof KeyFileError) throw new UsageError(error.message);
    throw error;
  }
}

export function callOptions(flags: ClientFlags): CallOptions {
  const options: CallOptions = {};
  if (flags.correlationId) options.correlationId = flags.correlationId;
  if (flags.async) options.respondAsync = true;
  if (flags.minimal) options.returnMinimal = true;
  return options;
}

export async function readJsonFile(file: string | undefined, io: CommandIo): Promise<unknown> {
  if (!file) throw new UsageError('--file is required (a JSON request body; - for standard input)');
  const what = 'the request body as JSON (--file - reads it from standard input)';
  const text = file === '-' ? await readInput(io) : readNamedFile('--file', file, what);
  return parseNamedJson('--file', file, text, what);
}

/** Prints an API or auth error the way a person or a script wants it; answers the exit code. */
export function reportError(io: CommandIo, error: unknown, json: boolean | undefined): number {
  if (error instanceof CoregateApiError) {
    if (json) {
      io.stdout.write(`${JSON.stringify({ status: error.status, reason: error.reason, message: error.message, path: error.path, errordetail: error.details, correlationId: error.correlationId }, null, 2)}\n`);
    } else {
      const codes = error.details.map((detail) => `${detail.code} ${detail.reason}`).join(', ');
      io.stderr.write(`coregate: ${error.status} ${error.reason}${codes ? ` (${codes})` : ''}: ${error.message}\n  correlation id: ${error.correlationId ?? '-'}\n`);
      if (error.code?.endsWith('-409-002')) {
        io.stderr.write('  the same request was made moments ago; to make a deliberate second identical operation, give it its own --correlation-id\n');
      }
    }
    return 1;
  }
  if (error instanceof CoregateAuthError) {
    io.stderr.write(`coregate: ${error.message}\n`);
    return 1;
  }
  return -1;
}

async function promptSecret(io: CommandIo, question: string): Promise<string> {
  if (!io.stdin.isTTY) throw new UsageError('set COREGATE_CLIENT_SECRET (no terminal to prompt for the secret)');
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) io.stderr.write(chunk);
      callback();
    },
  });
  const reader = createInterface({ input: io.stdin, output, terminal: true });
  io.stderr.write(question);
  muted = true;
  const answer = await new Promise<string>((resolve) => reader.question('', resolve));
  reader.close();
  io.stderr.write('\n');
  if (!answer) throw new UsageError('no client secret given');
  return answer;
}
