/** The client secret stays server side, never in a browser (docs/auth.md, "A client's secret and tokens"). */
export function assertServerSide(component: string): void {
  const scope = globalThis as { window?: unknown; document?: unknown };
  if (typeof scope.window !== 'undefined' && typeof scope.document !== 'undefined') {
    throw new Error(
      `coregate SDK: ${component} refuses to run with a client secret in a browser: the client_secret stays server side (docs/auth.md, "A client's secret and tokens"); call coregate from your backend.`,
    );
  }
}

/** Waits for `work` unless `signal` aborts first (the work itself goes on for other waiters). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
