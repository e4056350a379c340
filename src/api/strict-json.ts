/**
 * The business API's JSON reader (docs/api.md, "Order of checks" and "Money"): stricter than
 * JSON.parse where a lenient reading would let two parties see different requests, or would book
 * another amount than was sent.
 * - the bytes must be valid UTF-8 (RFC 8259), never read with replacement characters;
 * - a member name repeated in one object is refused (RFC 7493: a proxy reading the first and
 *   coregate the last would disagree on the customer);
 * - nesting deeper than `jsonDepthMax` is refused, so that no input can exhaust the stack;
 * - every number keeps its source text (`numberTextOf`), so that amounts and rates are checked
 *   as the decimals written, not as a binary double; a number a double cannot hold is refused;
 * - unpaired surrogate escapes (`"\ud800"`) and `__proto__` members are refused.
 * Everything else is RFC 8259 JSON. The recursion is bounded by the depth limit.
 */

import type { NumberSource } from '../core/money.js';

/** Objects and arrays nested in one another at most (the body itself is level 1). */
export const jsonDepthMax = 32;

/** Why a body was refused, with where: the message a client reads. */
export class JsonInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JsonInputError';
  }
}

/**
 * A body as read: its value, and the text each number member was written with (e.g. "1000.10"),
 * asked by the object that holds it and the member's name. The texts travel with the request
 * (the route hands them to the operation with the body), never through a registry.
 */
export interface StrictJson {
  value: unknown;
  numberTextOf: NumberSource;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const numberPattern = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function parseStrictJson(bytes: Uint8Array): StrictJson {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new JsonInputError('The request body is not valid UTF-8');
  }
  const reader = new Reader(text);
  const value = reader.document();
  const { numberTexts } = reader;
  return { value, numberTextOf: (container, member) => numberTexts.get(container)?.get(member) };
}

class Reader {
  #at = 0;
  readonly #text: string;
  /** Source texts of the numbers of every object this reader built, by member name. */
  readonly numberTexts = new Map<object, Map<string, string>>();

  constructor(text: string) {
    this.#text = text;
  }

  document(): unknown {
    this.#space();
    const value = this.#value(1);
    this.#space();
    if (this.#at < this.#text.length) this.#fail('unexpected text after the JSON value');
    return value;
  }

  #fail(problem: string): never {
    throw new JsonInputError(`The request body is not valid JSON: ${problem} at position ${this.#at}`);
  }

  #space(): void {
    const text = this.#text;
    let at = this.#at;
    for (;;) {
      const c = text.charCodeAt(at);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) at += 1;
      else break;
    }
    this.#at = at;
  }

  #value(depth: number): unknown {
    const c = this.#text.charCodeAt(this.#at);
    if (c === 0x7b /* { */) return this.#object(depth);
    if (c === 0x5b /* [ */) return this.#array(depth);
    if (c === 0x22 /* " */) return this.#string();
    if (c === 0x2d /* - */ || (c >= 0x30 && c <= 0x39)) return this.#number().value;
    if (this.#text.startsWith('true', this.#at)) return this.#literal(4, true);
    if (this.#text.startsWith('false', this.#at)) return this.#literal(5, false);
    if (this.#text.startsWith('null', this.#at)) return this.#literal(4, null);
    return this.#fail(this.#at >= this.#text.length ? 'unexpected end' : 'unexpected character');
  }

  #literal<T>(length: number, value: T): T {
    this.#at += length;
    return value;
  }

  #enter(depth: number): void {
    if (depth > jsonDepthMax) throw new JsonInputError(`The request body nests objects and arrays deeper than ${jsonDepthMax} levels`);
  }

  #object(depth: number): Record<string, unknown> {
    this.#enter(depth);
    this.#at += 1;
    const object: Record<string, unknown> = {};
    let texts: Map<string, string> | undefined;
    this.#space();
    if (this.#text.charCodeAt(this.#at) === 0x7d /* } */) {
      this.#at += 1;
      return object;
    }
    for (;;) {
      if (this.#text.charCodeAt(this.#at) !== 0x22) this.#fail('expected a member name');
      const name = this.#string();
      if (Object.prototype.hasOwnProperty.call(object, name)) throw new JsonInputError(`The request body repeats the member "${name}" in one object`);
      if (name === '__proto__') throw new JsonInputError('The request body has a "__proto__" member');
      this.#space();
      if (this.#text.charCodeAt(this.#at) !== 0x3a /* : */) this.#fail('expected ":"');
      this.#at += 1;
      this.#space();
      const c = this.#text.charCodeAt(this.#at);
      if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        const number = this.#number();
        object[name] = number.value;
        (texts ??= new Map()).set(name, number.text);
      } else {
        object[name] = this.#value(depth + 1);
      }
      this.#space();
      const next = this.#text.charCodeAt(this.#at);
      this.#at += 1;
      if (next === 0x7d) break;
      if (next !== 0x2c /* , */) {
        this.#at -= 1;
        this.#fail('expected "," or "}"');
      }
      this.#space();
    }
    if (texts) this.numberTexts.set(object, texts);
    return object;
  }

  #array(depth: number): unknown[] {
    this.#enter(depth);
    this.#at += 1;
    const array: unknown[] = [];
    this.#space();
    if (this.#text.charCodeAt(this.#at) === 0x5d /* ] */) {
      this.#at += 1;
      return array;
    }
    for (;;) {
      array.push(this.#value(depth + 1));
      this.#space();
      const next = this.#text.charCodeAt(this.#at);
      this.#at += 1;
      if (next === 0x5d) return array;
      if (next !== 0x2c) {
        this.#at -= 1;
        this.#fail('expected "," or "]"');
      }
      this.#space();
    }
  }

  #number(): { value: number; text: string } {
    numberPattern.lastIndex = this.#at;
    const match = numberPattern.exec(this.#text);
    if (!match) return this.#fail('malformed number');
    const text = match[0];
    const value = Number(text);
    if (!Number.isFinite(value)) throw new JsonInputError(`The request body has a number out of range: ${text.length > 40 ? `${text.slice(0, 40)}…` : text}`);
    this.#at += text.length;
    return { value, text };
  }

  #string(): string {
    const text = this.#text;
    let at = this.#at + 1;
    let out = '';
    let start = at;
    for (;;) {
      if (at >= text.length) {
        this.#at = at;
        this.#fail('unterminated string');
      }
      const c = text.charCodeAt(at);
      if (c === 0x22) break;
      if (c < 0x20) {
        this.#at = at;
        this.#fail('control character in a string');
      }
      if (c !== 0x5c /* \ */) {
        at += 1;
        continue;
      }
      out += text.slice(start, at);
      const escape = text.charCodeAt(at + 1);
      at += 2;
      switch (escape) {
        case 0x22: out += '"'; break;
        case 0x5c: out += '\\'; break;
        case 0x2f: out += '/'; break;
        case 0x62: out += '\b'; break;
        case 0x66: out += '\f'; break;
        case 0x6e: out += '\n'; break;
        case 0x72: out += '\r'; break;
        case 0x74: out += '\t'; break;
        case 0x75 /* u */: {
          const unit = this.#hex4(at);
          at += 4;
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low = text.charCodeAt(at) === 0x5c && text.charCodeAt(at + 1) === 0x75 ? this.#hex4(at + 2) : -1;
            if (low < 0xdc00 || low > 0xdfff) {
              this.#at = at;
              this.#fail('unpaired surrogate escape in a string');
            }
            at += 6;
            out += String.fromCharCode(unit, low);
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            this.#at = at;
            this.#fail('unpaired surrogate escape in a string');
          } else {
            out += String.fromCharCode(unit);
          }
          break;
        }
        default:
          this.#at = at - 2;
          this.#fail('invalid escape in a string');
      }
      start = at;
    }
    this.#at = at + 1;
    return out + text.slice(start, at);
  }

  #hex4(at: number): number {
    const digits = this.#text.slice(at, at + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) {
      this.#at = at;
      this.#fail('invalid \\u escape in a string');
    }
    return Number.parseInt(digits, 16);
  }
}
