/**
 * Running `coregate` commands. `runCli` runs the command line inside the test's process, on the
 * same program, flags, output and exit codes as the `coregate` process (src/cli/run-command.ts),
 * with captured streams and an environment of the test's choosing: a spawned command cost about
 * half a second of CPU to start, and the suite ran some two hundred (docs/testing.md).
 * `runCliProcess` runs the compiled CLI as a separate process, the way an operator would: for what
 * only a process shows (the entry, exit on a closed pipe, the thread pool, a kill) and for `serve`.
 */
import { execFile } from 'node:child_process';
import { PassThrough, Readable, Writable } from 'node:stream';
import { runCommand } from '../../src/cli/run-command.js';
import { cliPath, repoRoot, testAuditSpool } from './server.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment of the command (default: the test's own). */
  env?: NodeJS.ProcessEnv;
  /** Working directory (default: the repository root, so that relative data paths resolve). */
  cwd?: string;
  /** Fails when the command has not ended after this long (a process is killed; an in-process command is left to end); 0: never (default 30 s). */
  timeoutMs?: number;
  /** Largest output kept, in bytes (execFile's default: 1 MiB); a process only. */
  maxBuffer?: number;
  /** Written to standard input, which is then closed; without it, stdin stays open. */
  input?: string;
}

/** A stream that keeps what is written to it. */
class Captured extends Writable {
  readonly #chunks: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.#chunks.push(Buffer.from(chunk));
    callback();
  }
  get text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** `serve` and `core serve` run until signalled and own the process: they run as processes only. */
function serves(args: readonly string[]): boolean {
  const command = args[0] === 'core' ? args[1] : args[0];
  return command === 'serve' && !args.includes('--help') && !args.includes('-h');
}

/** Runs `coregate ...args` to completion in this process; never throws on a non-zero exit: the exit code is in the result. */
export async function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  if (serves(args)) throw new Error(`runCli: "coregate ${args.slice(0, 2).join(' ')}" runs as a process: use runCliProcess or spawnCoregate`);
  if (options.cwd !== undefined && options.cwd !== repoRoot && options.cwd !== process.cwd()) {
    throw new Error(`runCli runs in the test's process (working directory ${process.cwd()}): use runCliProcess for ${options.cwd}`);
  }
  const stdout = new Captured();
  const stderr = new Captured();
  const stdin = options.input === undefined ? new PassThrough() : Readable.from([options.input]);
  const run = runCommand(args, { env: options.env ?? { ...process.env }, stdout, stderr, stdin });
  const timeoutMs = options.timeoutMs ?? 30_000;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    if (timeoutMs > 0) timer = setTimeout(() => reject(new Error(`coregate ${args.join(' ')}: no end after ${timeoutMs} ms\nstdout: ${stdout.text}\nstderr: ${stderr.text}`)), timeoutMs);
  });
  try {
    const outcome = await Promise.race([run, expired]);
    return { code: outcome.exitCode, stdout: stdout.text, stderr: stderr.text };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs `coregate ...args` as a process to completion; never throws on a non-zero exit: the exit code is in the result. */
export function runCliProcess(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [cliPath, ...args],
      {
        cwd: options.cwd ?? repoRoot,
        // A `serve` it starts spools to the test process's own directory, never the repository's.
        env: { COREGATE_AUDIT_SPOOL: testAuditSpool(), ...(options.env ?? process.env) },
        timeout: options.timeoutMs ?? 30_000,
        ...(options.maxBuffer === undefined ? {} : { maxBuffer: options.maxBuffer }),
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
