/**
 * Real processes for tests that kill and restart them: a free port, `coregate` commands spawned
 * from the compiled CLI (scripts/test.mjs builds dist/ first), readiness, and their output.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cliPath, repoRoot, testAuditSpool } from './server.js';
import { waitFor } from './wait.js';

import { freePort } from '../../src/cli/free-port.js';

export { freePort };

export interface CoregateProcess {
  child: ChildProcess;
  port: number;
  url: string;
  output(): { stdout: string; stderr: string };
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends the signal and waits for the exit. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `coregate <args> --port <port> --host 127.0.0.1` and waits until GET /health/ready
 * answers 200 (or `readyLog` appears); a process that is not ready in time is killed.
 */
export async function spawnCoregate(
  args: string[],
  options: { port?: number; env?: Record<string, string>; readyTimeoutMs?: number; /** Ready when this appears on stdout (HTTPS servers, a ready banner) instead of at /health/ready. */ readyLog?: string } = {},
): Promise<CoregateProcess> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [cliPath, ...args, '--port', String(port), '--host', '127.0.0.1'], {
    cwd: repoRoot,
    env: { COREGATE_AUDIT_SPOOL: testAuditSpool(), ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk) => {
    // Bounded: a long run keeps the last 2 MB of its logs.
    stdout = (stdout + String(chunk)).slice(-2_000_000);
  });
  child.stderr?.on('data', (chunk) => {
    stderr = (stderr + String(chunk)).slice(-2_000_000);
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      `${args[0] ?? 'coregate'} on port ${port} to be ready`,
      async () => {
        if (child.exitCode !== null || child.signalCode !== null) throw new Error(`process exited early: ${stderr}${stdout.slice(-2000)}`);
        if (options.readyLog !== undefined) return stdout.includes(options.readyLog) ? true : undefined;
        try {
          return (await fetch(`${url}/health/ready`)).status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      // Generous: a loaded CI machine starts a process (and its workers) slowly.
      options.readyTimeoutMs ?? 60_000,
    );
  } catch (error) {
    // Left running, a process that never got ready would outlive the test.
    child.kill('SIGKILL');
    throw error;
  }
  return {
    child,
    port,
    url,
    output: () => ({ stdout, stderr }),
    exit,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exit;
    },
  };
}
