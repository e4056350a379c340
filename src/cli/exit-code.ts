/** Ends a command with this exit code after it printed its outcome: a finding of `check` or `audit verify`, a declined reset. */
export class ExitCode extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}
