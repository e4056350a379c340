/** The processes the bench measures: coregate as deployed, and the Fastify hello-world baseline. */
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import { freePort } from '../src/cli/free-port.js';
import { join } from 'node:path';
import { httpsRequest } from './mtls.js';

const repoRoot = new URL('..', import.meta.url).pathname;
const readyTimeoutMs = 60_000;

export interface Started {
  url: string;
  pid: number;
  /** Peak resident memory so far (VmHWM), MiB. */
  peakRssMiB(): number;
  stop(): Promise<void>;
}


/** `coregate serve` in its own process with the default log level; its log goes to a file. */
export async function startCoregate(options: { dataFile: string; db: string; logDir: string; name: string; workers: number; profileDir?: string; /** More flags (TLS: bench/mtls.ts); with --tls-cert the URL is https. */ extraArgs?: string[] }): Promise<Started> {
  const port = await freePort();
  // --profile: a V8 CPU profile of the server, written when it stops (bench/profile-summary.mjs reads it).
  const profile = options.profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${options.profileDir}`];
  const args = [...profile, ...(process.env.BENCH_PRELOAD ? ['--import', process.env.BENCH_PRELOAD] : []), join(repoRoot, 'dist/src/cli/coregate.cjs'), 'serve', '--data', options.dataFile, '--db', options.db, '--port', String(port), '--host', '127.0.0.1'];
  if (options.workers > 1) args.push('--workers', String(options.workers));
  const extra = options.extraArgs ?? [];
  args.push(...extra);
  // Ready once it says it listens: a port taken meanwhile by another process must not pass for it.
  return startProcess(args, `${extra.includes('--tls-cert') ? 'https' : 'http'}://127.0.0.1:${port}`, '/health/ready', join(options.logDir, `${options.name}.log`), 'Server listening at');
}

export async function startHelloWorld(logDir: string, profileDir?: string): Promise<Started> {
  const port = await freePort();
  const profile = profileDir === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${profileDir}`];
  return startProcess([...profile, join(repoRoot, 'bench/hello-world.mjs'), String(port)], `http://127.0.0.1:${port}`, '/', join(logDir, 'hello-world.log'), 'hello-world listening');
}

async function startProcess(args: string[], url: string, readyPath: string, logFile: string, readyLog?: string): Promise<Started> {
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, args, { cwd: repoRoot, stdio: ['ignore', log, log], env: { ...process.env, NODE_ENV: 'production' } });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await waitReady(child, exited, `${url}${readyPath}`, logFile, readyLog);
  const pid = child.pid ?? 0;
  return {
    url,
    pid,
    peakRssMiB: () => peakRssMiB(pid),
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function waitReady(child: ChildProcess, exited: Promise<number | null>, readyUrl: string, logFile: string, readyLog: string | undefined): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = Date.now() + readyTimeoutMs;
  while (Date.now() < deadline) {
    if (gone) throw new Error(`${readyUrl}: the process exited before it was ready; its log:\n${readFileSync(logFile, 'utf8').slice(-2000)}`);
    try {
      if (readyLog !== undefined && !readFileSync(logFile, 'utf8').includes(readyLog)) throw new Error('not listening yet');
      // The bench's own TLS server has a certificate made for the run: not checked.
      const status = readyUrl.startsWith('https:') ? (await httpsRequest(readyUrl, undefined)).status : await fetch(readyUrl).then(async (response) => (await response.arrayBuffer(), response.status));
      if (status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${readyUrl} was not ready within ${readyTimeoutMs} ms`);
}

/** Peak resident memory of the process and its children (the workers of --workers), MiB. */
function peakRssMiB(pid: number): number {
  const kib = [pid, ...childrenOf(pid)].reduce((sum, each) => sum + vmHwmKiB(each), 0);
  return Math.round(kib / 1024);
}

function vmHwmKiB(pid: number): number {
  try {
    return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((id) => id.trim() !== '').map(Number);
  } catch {
    return [];
  }
}
