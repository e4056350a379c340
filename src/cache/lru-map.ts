/**
 * A Map that holds at most `entriesMax` entries and forgets the least recently used beyond that
 * (a Map iterates in insertion order, so re-inserting on every use keeps the oldest first).
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>();

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
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#entries.delete(key);
    this.#entries.set(key, value);
    if (this.#entries.size > this.entriesMax) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#entries.delete(key);
  }

  clear(): void {
    this.#entries.clear();
  }
}
