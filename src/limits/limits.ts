/**
 * The limit store of an instance, chosen once at start: this instance's memory, or Redis shared
 * by every instance with memory behind it (fallback-limit-store.ts). `Limits` is also what health
 * and metrics read: whether limits are shared, whether Redis is down, how often memory answered.
 */
import type { Clock } from '../core/clock.js';
import type { Logger } from '../log.js';
import { FallbackLimitStore } from './fallback-limit-store.js';
import type { LimitStore } from './limit-store.js';
import { MemoryLimitStore } from './memory-limit-store.js';
import { redactRedisUrl } from './redis-url.js';

/** How long a start waits for a configured Redis before serving on per-instance limits. */
export const redisStartWaitMs = 2_000;

export interface LimitsOptions {
  /** Redis shared by every instance; undefined: limits in this instance's memory. */
  redisUrl: string | undefined;
  /** Prepended to every Redis key. */
  keyPrefix: string;
  /** A Redis command unanswered within this is answered from memory. */
  commandTimeoutMs: number;
  logger: Logger;
  /** Whose time opens and closes the limits' windows (src/core/clock.ts). */
  clock: Clock;
}

export interface LimitsStatus {
  /** `redis`: limits shared by every instance (unless degraded); `memory`: per instance. */
  backend: 'memory' | 'redis';
  /** Redis is configured but unusable: limits are per instance until it is back. */
  degraded: boolean;
  /** Limit operations answered from memory because Redis failed or was down, since start. */
  fallbacks: number;
  /** Redis outages since start. */
  outages: number;
}

export interface Limits {
  readonly store: LimitStore;
  readonly backend: 'memory' | 'redis';
  degraded(): boolean;
  fallbacks(): number;
  status(): LimitsStatus;
  close(): Promise<void>;
}

export async function openLimits(options: LimitsOptions): Promise<Limits> {
  if (options.redisUrl === undefined) {
    const store = new MemoryLimitStore({ clock: () => options.clock.now() });
    return {
      store,
      backend: 'memory',
      degraded: () => false,
      fallbacks: () => 0,
      status: () => ({ backend: 'memory', degraded: false, fallbacks: 0, outages: 0 }),
      close: () => store.close(),
    };
  }
  const primaryName = redactRedisUrl(options.redisUrl);
  // Loaded here: an instance without Redis never loads ioredis (~0.1 s of CPU at every start).
  const { RedisLimitStore } = await import('./redis-limit-store.js');
  const redis = new RedisLimitStore({ url: options.redisUrl, keyPrefix: options.keyPrefix, commandTimeoutMs: options.commandTimeoutMs });
  const store = new FallbackLimitStore(redis, new MemoryLimitStore({ clock: () => options.clock.now() }), { logger: options.logger, primaryName, clock: () => options.clock.now() });
  const first = await redis.firstConnection(redisStartWaitMs, options.clock);
  if (first.up) options.logger.info({ limitStore: primaryName, keyPrefix: options.keyPrefix }, 'limits shared through Redis');
  else store.primaryDown(first.reason);
  redis.onConnectionChange((change) => (change.up ? store.primaryUp() : store.primaryDown(change.reason)));
  return {
    store,
    backend: 'redis',
    degraded: () => store.degraded(),
    fallbacks: () => store.fallbacks(),
    status: () => ({ backend: 'redis', degraded: store.degraded(), fallbacks: store.fallbacks(), outages: store.outages() }),
    close: () => store.close(),
  };
}
