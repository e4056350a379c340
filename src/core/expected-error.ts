/**
 * The base of errors that are answers, not faults: a refused token, a refused request, a
 * business refusal. They travel as exceptions but never need a stack trace, and capturing one
 * cost a sixth of the CPU of a 401. Faults keep theirs: they are plain Errors.
 */
export class ExpectedError extends Error {
  constructor(message: string) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}
