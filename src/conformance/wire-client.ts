/**
 * Plain HTTP requests to a core, for what the port cannot send (a malformed command, a route that
 * does not exist) and for the kit's first look at a URL: each exchange is written to the log, and
 * each request ends within its time-out on the clock it is given (src/core/clock.ts).
 */
import type { Clock } from '../core/clock.js';
import type { ExchangeLog } from './exchange-log.js';

export interface WireAnswer {
  status: number;
  contentType: string;
  text: string;
  /** The body parsed, when it is JSON. */
  json: unknown;
}

/** An answer longer than this is cut (the protocol's own answers are far smaller). */
const answerTextMax = 256 * 1024;

export class WireClient {
  constructor(
    readonly baseUrl: string,
    private readonly log: ExchangeLog,
    private readonly clock: Clock,
    private readonly timeoutMs: number,
  ) {}

  /** Sends one request; a network failure or a time-out rejects with the reason, written to the log first. */
  async send(method: 'GET' | 'POST', path: string, body?: string, contentType = 'application/json'): Promise<WireAnswer> {
    const controller = new AbortController();
    const timer = this.clock.setTimeout(() => controller.abort(), this.timeoutMs);
    const request = `${method} ${path}${body === undefined ? '' : ` (Content-Type ${contentType}) ${body}`}`;
    try {
      const response = await fetch(`${this.baseUrl.replace(/\/+$/, '')}${path}`, {
        method,
        headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': contentType },
        ...(body === undefined ? {} : { body }),
        signal: controller.signal,
        redirect: 'manual',
      });
      const text = (await readBounded(response, answerTextMax, controller)).toString('utf8');
      const type = response.headers.get('content-type') ?? '';
      let json: unknown;
      try {
        json = /json/i.test(type) ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      this.log.record({ request, answer: `${response.status} ${type} ${text}` });
      return { status: response.status, contentType: type, text, json };
    } catch (error) {
      const reason = controller.signal.aborted ? `no answer within ${this.timeoutMs} ms` : networkReason(error);
      this.log.record({ request, answer: `no answer: ${reason}` });
      throw new Error(reason, { cause: error });
    } finally {
      timer.clear();
    }
  }
}

/** A response's body, at most `max` bytes: a longer one is cut there and the rest is not read. */
export async function readBounded(response: Response, max: number, abort: AbortController): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!response.body) return Buffer.alloc(0);
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
    if (size >= max) {
      abort.abort();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, max);
}

/** fetch says "fetch failed"; the reason (ECONNREFUSED 127.0.0.1:9, ENOTFOUND) is its cause's. */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.message) return cause.message;
  if (cause?.code) return cause.code;
  return (error as Error).message;
}
