/**
 * How a conformance rule ends other than passing (docs/conformance.md): broken, with what the kit
 * expected and what the core answered; or not run against this core, with the reason. And the one
 * error that stops the kit before any rule: the core cannot be reached, does not speak the
 * protocol, or the fixture file names what the core does not hold.
 */

/** A rule of the port was broken: the message says what was expected and what came back. */
export class RuleFailure extends Error {
  override name = 'RuleFailure';
}

/** A rule cannot run against this core (a side it does not serve, a fixture not given, an option not asked for). */
export class RuleSkipped extends Error {
  override name = 'RuleSkipped';
}

/** The kit cannot start: one line for the person at the terminal (the CLI's exit code 2). */
export class ConformanceSetupError extends Error {
  override name = 'ConformanceSetupError';
}
