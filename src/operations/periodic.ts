/**
 * A background task of an instance (the pending worker, the reconciler): one pass at a time, on a
 * timer that does not keep the process alive, stopped by waiting for the pass under way.
 */
export class Periodic {
  #timer: NodeJS.Timeout | undefined;
  #working: Promise<void> | undefined;
  #stopped = true;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => void this.kick(), this.intervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#working;
  }

  /** Runs a pass now unless one is under way (then that one is awaited); resolves when it ends. */
  kick(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    this.#working ??= this.pass()
      .catch(this.onError)
      .finally(() => {
        this.#working = undefined;
      });
    return this.#working;
  }
}
