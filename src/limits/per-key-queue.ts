/**
 * Runs work one at a time per key, in arrival order. The failed-authentication limit reads a
 * count, checks a secret and only then counts a failure; without this, a burst of concurrent
 * guesses would all read the count before any failure was counted and all be checked. Memory is
 * bounded by the requests in flight: a key is forgotten as soon as its last work ends.
 */
export class PerKeyQueue {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Keys with work running or waiting. */
  get size(): number {
    return this.#tails.size;
  }

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    const result = previous.then(work, work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
