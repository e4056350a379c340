/**
 * Limits shared by every instance through Redis. Each primitive is one Lua script, so a count is
 * read and changed atomically however many instances hit the same key, and every key it writes
 * gets a TTL in the same step: nothing outlives its window. The token bucket reads Redis' clock
 * (TIME), so instances with skewed clocks still share one bucket correctly.
 *
 * A dead or slow Redis must never stall a request: commands are not queued while disconnected,
 * time out after `commandTimeoutMs`, and are never retried or resent. The caller (the fallback
 * store) answers from memory instead.
 */
import type { Clock } from '../core/clock.js';
import { Redis, type Result } from 'ioredis';
import type { BucketTake, LimitStore, TokenBucket, WindowCount } from './limit-store.js';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    coregateLimitHit(key: string, windowMs: number): Result<[number, number], Context>;
    coregateLimitPeek(key: string): Result<[number, number], Context>;
    coregateLimitTake(key: string, ratePerSecond: number, burst: number): Result<number, Context>;
  }
}

/** INCR, and a TTL for a new window (or for a key that lost its TTL): answers {count, ms left}. */
const hitScript = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl}`;

/** The window as it stands; a key without a TTL is not one of ours to keep and is dropped. */
const peekScript = `
local count = redis.call('GET', KEYS[1])
if not count then return {0, 0} end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('DEL', KEYS[1])
  return {0, 0}
end
return {tonumber(count), ttl}`;

/**
 * A token bucket in a hash {tokens, refilledAtMs}; answers 0 when a token was taken, otherwise the
 * milliseconds until one is available. The key expires when the bucket would be full again, which
 * is the same as absent.
 */
const takeScript = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local time = redis.call('TIME')
local nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'refilledAtMs')
local tokens = tonumber(state[1]) or burst
local refilledAtMs = tonumber(state[2]) or nowMs
tokens = math.min(burst, tokens + math.max(0, nowMs - refilledAtMs) * rate / 1000)
local retryAfterMs = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  retryAfterMs = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'refilledAtMs', tostring(nowMs))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return retryAfterMs`;

/** The longest pause between two reconnection attempts: a restarted Redis is used again within it. */
export const redisReconnectDelayMsMax = 1_000;
/** A connection attempt that has not succeeded within this is abandoned (and retried). */
export const redisConnectTimeoutMs = 2_000;

export type ConnectionChange = { up: true } | { up: false; reason: string };

export interface RedisLimitStoreOptions {
  url: string;
  /** Prepended to every key, e.g. `coregate:`, so that several deployments can share one Redis. */
  keyPrefix: string;
  /** A command unanswered within this fails (the caller falls back to memory). */
  commandTimeoutMs: number;
}

export class RedisLimitStore implements LimitStore {
  readonly #redis: Redis;
  readonly #keyPrefix: string;
  readonly #listeners: Array<(change: ConnectionChange) => void> = [];
  #lastError = 'connection closed';

  constructor(options: RedisLimitStoreOptions) {
    this.#keyPrefix = options.keyPrefix;
    this.#redis = new Redis(options.url, {
      enableOfflineQueue: false,
      commandTimeout: options.commandTimeoutMs,
      connectTimeout: redisConnectTimeoutMs,
      // A command is never retried nor resent after a reconnection: by then its request was
      // answered from memory, and a late INCR would count a failure twice.
      maxRetriesPerRequest: 0,
      autoResendUnfulfilledCommands: false,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, redisReconnectDelayMsMax),
      lazyConnect: false,
    });
    this.#redis.defineCommand('coregateLimitHit', { numberOfKeys: 1, lua: hitScript });
    this.#redis.defineCommand('coregateLimitPeek', { numberOfKeys: 1, lua: peekScript });
    this.#redis.defineCommand('coregateLimitTake', { numberOfKeys: 1, lua: takeScript });
    // Without an 'error' listener ioredis prints every failed reconnection to stderr.
    this.#redis.on('error', (error: Error) => {
      this.#lastError = error.message;
    });
    this.#redis.on('ready', () => this.#emit({ up: true }));
    this.#redis.on('close', () => this.#emit({ up: false, reason: this.#lastError }));
  }

  /** Called on every connection and disconnection (repeated disconnections included). */
  onConnectionChange(listener: (change: ConnectionChange) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * The outcome of the first connection attempt: up, or down at its first failure or after
   * `timeoutMs` of `clock`'s time (the instance's: src/core/clock.ts).
   */
  firstConnection(timeoutMs: number, clock: Clock): Promise<ConnectionChange> {
    if (this.#redis.status === 'ready') return Promise.resolve({ up: true });
    return new Promise((resolve) => {
      const timer = clock.setTimeout(() => settle({ up: false, reason: `no connection within ${timeoutMs} ms` }), timeoutMs);
      const settle = (change: ConnectionChange) => {
        timer.clear();
        this.#redis.off('ready', onReady);
        this.#redis.off('close', onClose);
        resolve(change);
      };
      const onReady = () => settle({ up: true });
      const onClose = () => settle({ up: false, reason: this.#lastError });
      this.#redis.on('ready', onReady);
      this.#redis.on('close', onClose);
    });
  }

  async hit(key: string, windowMs: number): Promise<WindowCount> {
    const [count, resetInMs] = await this.#redis.coregateLimitHit(this.#keyPrefix + key, windowMs);
    return { count, resetInMs };
  }

  async peek(key: string): Promise<WindowCount> {
    const [count, resetInMs] = await this.#redis.coregateLimitPeek(this.#keyPrefix + key);
    return { count, resetInMs };
  }

  async take(key: string, bucket: TokenBucket): Promise<BucketTake> {
    const retryAfterMs = await this.#redis.coregateLimitTake(this.#keyPrefix + key, bucket.ratePerSecond, bucket.burst);
    return retryAfterMs === 0 ? { allowed: true } : { allowed: false, retryAfterMs };
  }

  async close(): Promise<void> {
    this.#listeners.length = 0;
    try {
      // QUIT lets Redis finish what it received; it fails at once when there is no connection.
      await this.#redis.quit();
    } catch {
      // Nothing to finish.
    } finally {
      this.#redis.disconnect(false);
    }
  }

  #emit(change: ConnectionChange): void {
    for (const listener of this.#listeners) listener(change);
  }
}
