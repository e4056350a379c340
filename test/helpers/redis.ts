/**
 * Redis for the limit tests: the shared Redis at COREGATE_TEST_REDIS_URL (default
 * redis://127.0.0.1:6379), a random key prefix per suite with its keys deleted afterwards, and a
 * redis-server child process of a test's own for outages. As with PostgreSQL (stores.ts), a
 * missing Redis or redis-server skips the suites with a message, except under CI=true, where it
 * fails them.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { freePort } from './processes.js';
import { Redis } from 'ioredis';
import { waitFor } from './wait.js';

export const redisTestUrl = process.env.COREGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const required = process.env.CI === 'true';

/** Connects, PINGs and disconnects; answers the failure, or undefined when Redis answered. */
export async function pingRedis(url: string, timeoutMs = 1_000): Promise<string | undefined> {
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: timeoutMs });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.disconnect();
  }
}

async function redisReachable(): Promise<string | undefined> {
  const failure = await pingRedis(redisTestUrl, 3_000);
  if (failure === undefined) return undefined;
  const reason = `Redis not reachable at ${redisTestUrl} (${failure})`;
  if (required) throw new Error(`${reason}: CI=true requires the Redis suites`);
  console.warn(`# skipping Redis suites: ${reason}; set COREGATE_TEST_REDIS_URL or start Redis`);
  return reason;
}

function redisServerAvailable(): string | undefined {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.status === 0) return undefined;
  const reason = `redis-server cannot be run (${probe.error?.message ?? `exit ${probe.status}`})`;
  if (required) throw new Error(`${reason}: CI=true requires the Redis outage suites`);
  console.warn(`# skipping Redis outage suites: ${reason}; put redis-server on PATH`);
  return reason;
}

/** A reason to skip the suites that use the shared Redis, or undefined. */
export const redisSkip: string | undefined = await redisReachable();
/** A reason to skip the suites that run a redis-server of their own, or undefined. */
export const redisServerSkip: string | undefined = redisServerAvailable();

/** `coregate-test-<random>:`: keys of one suite, apart from every other run's. */
export function randomKeyPrefix(): string {
  return `coregate-test-${randomBytes(6).toString('hex')}:`;
}

/** Every key under `prefix` with its TTL in ms (-1: none). The prefix holds no glob character. */
export async function keysUnder(url: string, prefix: string): Promise<Array<{ key: string; ttlMs: number }>> {
  const client = new Redis(url);
  try {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== '0');
    return await Promise.all(keys.map(async (key) => ({ key, ttlMs: await client.pttl(key) })));
  } finally {
    client.disconnect();
  }
}

/** Deletes every key under `prefix` (SCAN + DEL); answers how many there were. */
export async function deleteKeysUnder(url: string, prefix: string): Promise<number> {
  const keys = await keysUnder(url, prefix);
  if (keys.length === 0) return 0;
  const client = new Redis(url);
  try {
    return await client.del(...keys.map((entry) => entry.key));
  } finally {
    client.disconnect();
  }
}


export interface RedisProcess {
  url: string;
  /** Kills the server at once (SIGKILL: no goodbye to its clients), as a crash would. */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  restart(): Promise<void>;
}

/** A redis-server child process on a free port, without persistence; kill() it in `after`. */
export async function startRedisServer(): Promise<RedisProcess> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(`redis-server on port ${port}`, async () => ((await pingRedis(url, 500)) === undefined ? true : undefined), 10_000);
  };
  await start();
  return {
    url,
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null || running.signalCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
    restart: start,
  };
}

export { freePort };
