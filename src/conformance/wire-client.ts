/**
 * Plain HTTP requests to a core, for what the port cannot send (a malformed command, a route that
 * does not exist) and for the kit's first look at a URL. It sends what it is given and reads the
 * answer as HttpCore does (undici, no Accept-Encoding, no decompression, at most 256 KiB of UTF-8:
 * the adapter's own `readBounded`), so that the kit sees the bytes the API would. Each exchange is
 * written to the log, and each request ends within its time-out on the clock it is given
 * (src/core/clock.ts).
 */
import { request } from 'undici';
import type { Clock } from '../core/clock.js';
import { readBounded } from '../core-http/http-core-adapter.js';
import type { ExchangeLog } from './exchange-log.js';

export interface WireAnswer {
  status: number;
  contentType: string;
  text: string;
  /** The body parsed, when it is JSON. */
  json: unknown;
}

/** A request that got no usable answer: `status` when the core answered one whose body could not be read (too large, not UTF-8). */
export class WireFailure extends Error {
  override name = 'WireFailure';
  constructor(
    message: string,
    readonly status: number | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

export class WireClient {
  constructor(
    readonly baseUrl: string,
    private readonly log: ExchangeLog,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
  ) {}

  /** Sends one request; a network failure, a time-out or an unreadable body rejects with a WireFailure saying why, written to the log first. */
  async send(method: 'GET' | 'POST', path: string, body?: string, contentType = 'application/json'): Promise<WireAnswer> {
    const controller = new AbortController();
    const timer = this.clock.setTimeout(() => controller.abort(), this.timeoutMs);
    const described = `${method} ${path}${body === undefined ? '' : ` (Content-Type ${contentType}) ${body}`}`;
    let status: number | undefined;
    let encoding = '';
    try {
      const response = await request(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': contentType },
        body: body ?? null,
        signal: controller.signal,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      status = response.statusCode;
      const headerOf = (name: string) => String(response.headers[name] ?? '');
      encoding = headerOf('content-encoding');
      const type = headerOf('content-type');
      const text = await readBounded(response.body);
      let json: unknown;
      try {
        json = /json/i.test(type) ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      this.log.record({ request: described, answer: `${status} ${type}${encoding === '' ? '' : ` (Content-Encoding ${encoding})`} ${text}` });
      return { status, contentType: type, text, json };
    } catch (error) {
      const reason = controller.signal.aborted ? `no answer within ${this.timeoutMs} ms` : networkReason(error);
      const answered = status === undefined ? undefined : `${status}${encoding === '' ? '' : ` (Content-Encoding ${encoding})`}`;
      this.log.record({ request: described, answer: answered === undefined ? `no answer: ${reason}` : `${answered}, then ${reason}` });
      throw new WireFailure(answered === undefined ? reason : `answered ${answered} with ${reason}`, status, { cause: error });
    } finally {
      timer.clear();
    }
  }
}

/** A failed request's reason as the person at the terminal reads it: the system's code and message (ECONNREFUSED 127.0.0.1:9, ENOTFOUND). */
export function networkReason(error: unknown): string {
  const { code, message, cause } = error as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (cause?.message) return cause.message;
  if (message && code && !message.includes(code)) return `${message} (${code})`;
  return message ?? code ?? String(error);
}
