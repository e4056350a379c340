/**
 * Calls held until the test lets them go, and a way to wait until the next one arrives: the
 * mechanism of the port's gated faults (faulty-core.ts), never a timer.
 */
export class Gate {
  #held: Array<() => void> = [];
  #arrivals: Array<() => void> = [];

  /** Resolves when the next call arrives at the gate (held, or failing at once). */
  arrived(): Promise<void> {
    return new Promise((resolve) => this.#arrivals.push(resolve));
  }

  /** Lets every held call go on. */
  release(): void {
    const held = this.#held;
    this.#held = [];
    for (const go of held) go();
  }

  /** A call arrives and is held: resolves on the next release(). */
  hold(): Promise<void> {
    const held = new Promise<void>((resolve) => this.#held.push(resolve));
    this.arrive();
    return held;
  }

  /** A call arrives without being held (it fails at once). */
  arrive(): void {
    const arrivals = this.#arrivals;
    this.#arrivals = [];
    for (const resolve of arrivals) resolve();
  }
}
