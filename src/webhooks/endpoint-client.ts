/**
 * The HTTP side of a delivery: one POST to an endpoint, through an undici Agent whose sockets
 * connect only to addresses the target policy allows (checked-lookup.ts). A URL whose host is an
 * address is checked here, before any socket: the socket does not resolve an address, so the
 * lookup never sees it. Redirects are not followed (a redirect is not a delivery), and the
 * response body is drained up to a bound, never read.
 *
 * The answer is a failure class, for the client's and the operator's views, and a detail for
 * the log only: a socket's error text tells an open port from a closed one.
 */
import type { Agent } from 'undici';
import type { Clock } from '../core/clock.js';
import type { DeliveryFailure } from '../store/webhooks.js';
import { checkedLookup, ForbiddenTarget, type ResolveHost } from './checked-lookup.js';
import { forbiddenHostRange, type TargetPolicy } from './target-address.js';

/** Response bytes drained so the connection can be reused; a longer body closes it instead. */
const responseDrainBytesMax = 64 * 1024;
/** The detail logged for an operator: enough to read, never a response body at length. */
const detailCharsMax = 300;

export type PostOutcome =
  | { kind: 'answered'; statusCode: number }
  | { kind: 'failed'; failure: DeliveryFailure; detail: string }
  /** The instance is stopping: the attempt was abandoned and counts for nothing. */
  | { kind: 'stopped' };

export interface EndpointClientOptions {
  policy: TargetPolicy;
  resolveHost: ResolveHost;
  /** How long one POST may take, from the connection to the response's head. */
  requestTimeoutMs: number;
  /** Whose timer cuts a POST at requestTimeoutMs (src/core/clock.ts). */
  clock: Clock;
}

/** undici and the agent, made with the first POST. */
interface Sender {
  agent: Agent;
  request: typeof import('undici').request;
}

export class EndpointClient {
  readonly #options: EndpointClientOptions;
  /**
   * undici (about 110 modules, 0.1–0.2 s of CPU to load) loads with the first delivery, not with
   * the server: most instances, and every test server, send none (docs/performance.md, "CLI start").
   */
  #sender: Promise<Sender> | undefined;

  constructor(options: EndpointClientOptions) {
    this.#options = options;
  }

  #senderNow(): Promise<Sender> {
    this.#sender ??= import('undici').then(({ Agent, request }) => ({
      agent: new Agent({
        connect: { lookup: checkedLookup(this.#options.resolveHost, this.#options.policy), timeout: this.#options.requestTimeoutMs },
        headersTimeout: this.#options.requestTimeoutMs,
        bodyTimeout: this.#options.requestTimeoutMs,
      }),
      request,
    }));
    return this.#sender;
  }

  async post(url: string, headers: Record<string, string>, body: string, stop: AbortSignal): Promise<PostOutcome> {
    if (stop.aborted) return { kind: 'stopped' };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { kind: 'failed', failure: 'connection_failed', detail: 'the stored URL cannot be parsed' };
    }
    const range = forbiddenHostRange(target.hostname, this.#options.policy);
    if (range !== undefined) return { kind: 'failed', failure: 'forbidden_target', detail: new ForbiddenTarget(target.hostname, target.hostname, range).message };
    const { agent, request } = await this.#senderNow();
    if (stop.aborted) return { kind: 'stopped' };
    const timeout = new AbortController();
    const timer = this.#options.clock.setTimeout(() => timeout.abort(), this.#options.requestTimeoutMs);
    try {
      const response = await request(target, {
        dispatcher: agent,
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([timeout.signal, stop]),
      });
      await response.body.dump({ limit: responseDrainBytesMax }).catch(() => {});
      return { kind: 'answered', statusCode: response.statusCode };
    } catch (error) {
      if (stop.aborted) return { kind: 'stopped' };
      if (timeout.signal.aborted) return { kind: 'failed', failure: 'timeout', detail: `no answer within ${this.#options.requestTimeoutMs} ms` };
      return { kind: 'failed', failure: failureOf(error), detail: detailOf(error) };
    } finally {
      timer.clear();
    }
  }

  async close(): Promise<void> {
    if (this.#sender !== undefined) await (await this.#sender).agent.close();
  }
}

/** The class of a failed request: a refused target, undici's own time-outs, or anything else on the way. */
function failureOf(error: unknown): DeliveryFailure {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    if (cause instanceof ForbiddenTarget) return 'forbidden_target';
    const code = (cause as { code?: unknown }).code;
    if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return 'timeout';
  }
  return 'connection_failed';
}

/** A network failure in the operator's words, without the URL (it may carry a token in its query). */
function detailOf(error: unknown): string {
  if (error instanceof ForbiddenTarget) return error.message;
  const { code, message } = error as { code?: unknown; message?: unknown };
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  const detail = [code, message, cause?.code, cause?.message].filter((part) => typeof part === 'string' && part !== '').join(': ');
  return (detail === '' ? String(error) : detail).slice(0, detailCharsMax);
}
