/** Running the compiled `coregate` CLI as a separate process, the way an operator would. */
import { execFile } from 'node:child_process';
import { cliPath, repoRoot } from './server.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** The whole environment of the process (default: the test's own). */
  env?: NodeJS.ProcessEnv;
  /** Working directory (default: the repository root, so that relative data paths resolve). */
  cwd?: string;
  /** Kills a hung process after this long; 0: never (default 30 s). */
  timeoutMs?: number;
  /** Largest output kept, in bytes (execFile's default: 1 MiB). */
  maxBuffer?: number;
  /** Written to standard input, which is then closed; without it, stdin stays an open pipe. */
  input?: string;
}

/** Runs `coregate ...args` to completion; never throws on a non-zero exit: the exit code is in the result. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [cliPath, ...args],
      {
        cwd: options.cwd ?? repoRoot,
        env: options.env ?? { ...process.env },
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
