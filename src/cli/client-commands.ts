/**
 * The CLI as a client of a running coregate, through the SDK. URLs and the client id come from
 * flags or the environment; the secret only from COREGATE_CLIENT_SECRET or a hidden prompt,
 * never from a flag (flags end up in shell history and process lists).
 */
import { KeyFileError, readPrivateKey } from './key-file.js';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { printerOf, readInput, type CommandContext, type CommandIo, type Printer } from './command-io.js';
import { parseNamedJson, readNamedFile } from './named-file.js';
import { CoregateApiError, CoregateAuthError, CoregateClient, type CallOptions, type ClientPrivateKey, type SessionIdentity } from '../sdk/index.js';

/** `env`: COREGATE_URL, COREGATE_CLIENT_ID, COREGATE_CLIENT_SECRET...; `clock`: the SDK's, for its tokens' renewal and its proofs' times. */
export interface ClientFlags extends CommandContext {
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
  /** FAPI 2.0 (docs/auth.md, "The SDK and the CLI"): the client's private key file (PEM PKCS#8 or a JWK), its kid, DPoP-bound tokens. */
  privateKey?: string;
  keyId?: string;
  dpop?: boolean;
}

/** `coregate token`, `term-deposit initiate|retrieve`, `loan execute`, `operations get`: calls of a running server through the SDK. */
export function addClientCommands(program: Command, io: CommandIo): void {
  const print = printerOf(io);
  addTokenCommand(program, io, print);
  addTermDepositCommands(program, io, print);
  addLoanCommands(program, io, print);
  addOperationsCommands(program, io, print);
}

function addTokenCommand(program: Command, io: CommandIo, print: Printer): void {
  addClientOptions(program.command('token').description('print an access token for the client (and session)'))
    .option('--scope <scopes>', 'narrow the token to these scopes (space-separated)')
    .action(async (flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const token = await client.token(identity);
      if (flags.json) print({ access_token: token, token_type: 'Bearer' });
      else print(token);
    });
}

function addTermDepositCommands(program: Command, io: CommandIo, print: Printer): void {
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
}

function addLoanCommands(program: Command, io: CommandIo, print: Printer): void {
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
}

function addOperationsCommands(program: Command, io: CommandIo, print: Printer): void {
  addClientOptions(program.command('operations').description('business operations: their state and outcome (client of a running server)').command('get').description('state of an operation (e.g. after a 202)').argument('<reference>'))
    .action(async (reference: string, flags: ClientFlags) => {
      const { client, identity } = await clientFrom(flags, io);
      const { result: view } = await client.session(identity).operations.get(reference);
      if (flags.json) return print(view);
      print(`Operation ${view.reference} (${view.operation}): ${view.status}${view.error ? ` — ${view.error.status} ${view.error.message}` : ''}`);
      if (view.result !== undefined) print(JSON.stringify(view.result, null, 2));
    });
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
    now: () => flags.clock.now(),
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
