/**
 * What the core was asked and what it answered, kept so that a broken rule can show the request
 * and the answer that broke it (docs/conformance.md, "Reading a failure"). Over HTTP the recording
 * proxy (recording-proxy.ts) writes the wire's exchanges; for an in-process adapter the port's
 * calls and answers are written by `recordedPort`.
 */

/** One request and its answer, as text a person reads. */
export interface Exchange {
  request: string;
  answer: string;
}

/** Exchanges kept at most: a run makes a few hundred; a failure shows the last of its own. */
const exchangesKeptMax = 500;
/** A request's or answer's text is cut there: enough to read a command or an outcome whole. */
export const exchangeTextMax = 2000;

export class ExchangeLog {
  readonly #entries: Exchange[] = [];
  #count = 0;

  record(exchange: Exchange): void {
    this.#entries.push({ request: cut(exchange.request), answer: cut(exchange.answer) });
    this.#count += 1;
    if (this.#entries.length > exchangesKeptMax) this.#entries.shift();
  }

  /** A position to read from later (`since`). */
  mark(): number {
    return this.#count;
  }

  /** The exchanges recorded after `mark`, the last `max` of them. */
  since(mark: number, max: number): Exchange[] {
    const recorded = this.#count - mark;
    const kept = Math.min(recorded, this.#entries.length, max);
    return kept <= 0 ? [] : this.#entries.slice(this.#entries.length - kept);
  }
}

function cut(text: string): string {
  return text.length > exchangeTextMax ? `${text.slice(0, exchangeTextMax)}… (${text.length} characters)` : text;
}

/** JSON with bigint amounts written as `123n`: the port's values as a person reads them. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  return JSON.stringify(value, (_key, item: unknown) => (typeof item === 'bigint' ? `${item}n` : item)) ?? String(value);
}

/**
 * The port with every call and its answer (or error) written to `log`: an in-process adapter has
 * no wire to record. Methods keep their `this`; properties that are not functions pass through.
 */
export function recordedPort<T extends object>(port: T, log: ExchangeLog): T {
  return new Proxy(port, {
    get(target, property, receiver) {
      const member: unknown = Reflect.get(target, property, receiver);
      if (typeof member !== 'function' || typeof property !== 'string') return member;
      return (...args: unknown[]) => {
        const request = `${property}(${args.map(describeValue).join(', ')})`;
        let answer: unknown;
        try {
          answer = (member as (...values: unknown[]) => unknown).apply(target, args);
        } catch (error) {
          log.record({ request, answer: `threw ${describeError(error)}` });
          throw error;
        }
        if (!(answer instanceof Promise)) return answer;
        return answer.then(
          (value: unknown) => {
            log.record({ request, answer: describeValue(value) });
            return value;
          },
          (error: unknown) => {
            log.record({ request, answer: `threw ${describeError(error)}` });
            throw error;
          },
        );
      };
    },
  });
}

export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
