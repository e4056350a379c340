/**
 * CPU time spent during a measured run, per process, from /proc (Linux): the server's (all its
 * threads and workers; its main thread apart), PostgreSQL's (every `postgres` process), the load
 * generator's (this process: autocannon runs in it) and the whole machine's. Throughput moves
 * with the machine's phase (its disk, its neighbours); the CPU a request costs the server moves
 * far less, and the shares of a core say what bounded the run. Elsewhere than Linux nothing is
 * read and the figures are absent.
 */
import { availableParallelism } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';

/** What one measured run cost, per request and as shares of one core (1 = a whole core). */
export interface CpuUse {
  /** User + system CPU of the server's processes per answered request, µs. */
  serverUsPerRequest: number;
  serverCores: number;
  /** The server's main thread (its event loop) alone; with --workers, the primary's. */
  serverMainThreadCores: number;
  /** Every PostgreSQL process, when the store is PostgreSQL. */
  postgresUsPerRequest?: number;
  postgresCores?: number;
  /** This process: autocannon's client, which builds every request afresh. */
  loadGeneratorCores: number;
  /** Busy share of all the machine's cores (1 = every core busy). */
  machineBusy: number;
}

const ticksPerSecond = 100;
const linux = process.platform === 'linux';

interface Ticks {
  command: string;
  ticks: number;
}

function statTicks(path: string): Ticks | undefined {
  try {
    const stat = readFileSync(path, 'utf8');
    const close = stat.lastIndexOf(') ');
    const fields = stat.slice(close + 2).split(' ');
    return { command: stat.slice(stat.indexOf('(') + 1, close), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return undefined; // the process ended meanwhile
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter((id) => id.trim() !== '').map(Number);
  } catch {
    return [];
  }
}

function serverTicks(pid: number): { all: number; main: number } {
  const all = [pid, ...childrenOf(pid)].reduce((sum, each) => sum + (statTicks(`/proc/${each}/stat`)?.ticks ?? 0), 0);
  return { all, main: statTicks(`/proc/${pid}/task/${pid}/stat`)?.ticks ?? 0 };
}

/** User + system ticks of every PostgreSQL process (its backends do the store's work on PostgreSQL), by pid. */
export function postgresTicks(): Map<number, number> {
  const ticks = new Map<number, number>();
  if (!linux) return ticks;
  for (const entry of readdirSync('/proc')) {
    if (entry.charCodeAt(0) > 0x39) continue;
    const stat = statTicks(`/proc/${entry}/stat`);
    if (stat?.command === 'postgres') ticks.set(Number(entry), stat.ticks);
  }
  return ticks;
}

/**
 * The ticks PostgreSQL's processes spent since `before`: a backend started meanwhile counts whole,
 * one that ended meanwhile is lost (its last ticks cannot be read), never negative.
 */
export function postgresTicksSince(before: Map<number, number>): number {
  let spent = 0;
  for (const [pid, ticks] of postgresTicks()) spent += Math.max(0, ticks - (before.get(pid) ?? 0));
  return spent;
}

/** Busy and total jiffies of every core (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

/** Starts counting; the function it answers stops and reports, given the requests answered meanwhile. */
export type CpuProbe = () => (requests: number) => CpuUse | undefined;

export function cpuProbe(serverPid: number, options: { postgres?: boolean } = {}): CpuProbe {
  return () => {
    if (!linux) return () => undefined;
    const startedAt = performance.now();
    const server = serverTicks(serverPid);
    const postgres = options.postgres ? postgresTicks() : new Map<number, number>();
    const generator = process.cpuUsage();
    const machine = machineTicks();
    return (requests) => {
      const seconds = (performance.now() - startedAt) / 1000;
      const serverNow = serverTicks(serverPid);
      const generatorUs = process.cpuUsage(generator);
      const machineNow = machineTicks();
      const perRequestUs = (ticks: number) => round((ticks / ticksPerSecond / Math.max(1, requests)) * 1e6);
      const cores = (ticks: number) => round(ticks / ticksPerSecond / seconds, 2);
      const use: CpuUse = {
        serverUsPerRequest: perRequestUs(serverNow.all - server.all),
        serverCores: cores(serverNow.all - server.all),
        serverMainThreadCores: cores(serverNow.main - server.main),
        loadGeneratorCores: round((generatorUs.user + generatorUs.system) / 1e6 / seconds, 2),
        machineBusy: round((machineNow.busy - machine.busy) / Math.max(1, machineNow.total - machine.total), 2),
      };
      if (options.postgres) {
        const spent = postgresTicksSince(postgres);
        use.postgresUsPerRequest = perRequestUs(spent);
        use.postgresCores = cores(spent);
      }
      return use;
    };
  };
}

/** A share of a core at which that party is the bottleneck of a closed-loop run. */
const saturated = 0.85;

/**
 * What bounded a run, from its CPU shares: the load generator (one core, in this process), the
 * server's event loop, PostgreSQL, every core of the machine, or none of them — then the run
 * waited, for disk syncs or locks.
 */
export function boundBy(cpu: CpuUse | undefined): string {
  if (cpu === undefined) return '–';
  if (cpu.loadGeneratorCores >= saturated) return 'load generator';
  if (cpu.serverMainThreadCores >= saturated) return "coregate's event loop";
  if ((cpu.postgresCores ?? 0) >= saturated) return "PostgreSQL's CPU";
  if (cpu.machineBusy >= 0.9 || cpu.serverCores >= availableParallelism() * saturated) return 'every core busy';
  return 'waits (disk syncs, locks)';
}

function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
