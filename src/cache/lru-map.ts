/**
 * A Map that holds at most `entriesMax` entries and forgets the least recently used beyond that
 * (a Map iterates in insertion order, so re-inserting on every use keeps the oldest first).
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();
  /**
   * The most recently used key: using it again changes no order, so the Map is left alone (a
   * delete and a set on every hit were measurable on the request path, where one token or one
   * statement is often used many times in a row).
   */
  #newest: K | undefined;
  #hasNewest = false;

  constructor(readonly entriesMax: number) {
    if (!Number.isInteger(entriesMax) || entriesMax < 1) throw new Error(`LruMap needs entriesMax >= 1, got ${entriesMax}`);
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The value of `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    if (this.#hasNewest && this.#newest === key) return value;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    this.#newest = key;
    this.#hasNewest = true;
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    this.#newest = key;
    this.#hasNewest = true;
    if (this.#entries.size > this.entriesMax) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
    if (this.#hasNewest && this.#newest === key) this.#forgetNewest();
  }

  clear(): void {
    this.#entries.clear();
    this.#forgetNewest();
  }

  #forgetNewest(): void {
    this.#newest = undefined;
    this.#hasNewest = false;
  }
}
