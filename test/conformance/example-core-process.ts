/**
 * The example core (examples/core-js/server.mjs) as its own process, as a bank would run its core:
 * on a port of its choosing (0), ready when it prints its URL.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../helpers/repo-root.js';

export const exampleCoreServer = join(repoRoot, 'examples/core-js/server.mjs');

export interface ExampleCore {
  url: string;
  output(): string;
  stop(): Promise<void>;
}

/** Starts it on 127.0.0.1 and a free port, business date 2026-03-02 (a Monday) unless told. */
export async function startExampleCore(options: { break?: string; businessDate?: string; args?: string[] } = {}): Promise<ExampleCore> {
  const args = [exampleCoreServer, '--port', '0', '--host', '127.0.0.1', '--business-date', options.businessDate ?? '2026-03-02', ...(options.break ? ['--break', options.break] : []), ...(options.args ?? [])];
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Waits for what the spawned process prints (its URL once it listens), or its exit.
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example core printed no URL within 30 s: ${output}`)), 30_000);
    const read = (chunk: Buffer) => {
      output = (output + String(chunk)).slice(-100_000);
      const match = /listening on (http:\/\/\S+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example core exited with ${code}: ${output}`));
    });
  });
  return {
    url,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
