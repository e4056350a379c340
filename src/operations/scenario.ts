/**
 * Sandbox scenarios (docs/sandbox.md, "Scenarios"): an outcome a client forces on one operation
 * with the `Coregate-Scenario` header, so that its code for a 502, a 504, a late 202 settlement or
 * a slow core can be tried on demand. The application layer knows which scenarios answer 202 (the
 * runner accepts them with a delay) and hands the scenario to the execution, which calls the core
 * through the sandbox's decorator of the port (src/sandbox/scenario-core.ts); the fault itself is
 * made there, at the port, so correlation, the reconciler, webhooks, the audit and the operation
 * resource see what a real failing core would make them see.
 */

export const scenarioNames = ['core-unavailable', 'core-timeout', 'core-timeout-then-commit', 'async-executed', 'async-rejected', 'slow'] as const;

export type ScenarioName = (typeof scenarioNames)[number];

export interface Scenario {
  readonly name: ScenarioName;
  /** `Coregate-Scenario-Delay-Ms`: how late an async scenario settles, or a slow core answers. */
  readonly delayMs: number;
}

/** The delay when `Coregate-Scenario-Delay-Ms` is absent: "a few seconds later". */
export const scenarioDelayDefaultMs = 2_000;
export const scenarioDelayMaxMs = 60_000;
/**
 * How long the reconciler leaves an outcome a scenario made unknown (core-unavailable,
 * core-timeout) alone: the outage the scenario simulates. A client's repeat within it executes;
 * after it, nobody having repeated, the reconciler settles it as for a real core (NOT_EXECUTED).
 */
export const scenarioOutageMs = 60_000;

/** What a client sees of each scenario: the OpenAPI document's and docs/sandbox.md's words. */
export const scenarioEffects: Readonly<Record<ScenarioName, string>> = {
  'core-unavailable': '502 CORE_UNAVAILABLE; the core is not called, nothing is executed; a repeat with the same x-correlation-id executes it',
  'core-timeout': '504 CORE_TIMEOUT after the core time-out; the core never executes it; nobody repeating, the reconciler settles it Rejected NOT_EXECUTED',
  'core-timeout-then-commit': '504 CORE_TIMEOUT, but the core executed it: a repeat answers 409 naming the operation, GET /v1/operations/{reference} shows it Executed with its result',
  'async-executed': '202 Pending; executed after Coregate-Scenario-Delay-Ms (default 2000), with its operation.executed webhook',
  'async-rejected': '202 Pending; rejected after Coregate-Scenario-Delay-Ms (default 2000) with REJECTED_BY_CORE, with its operation.rejected webhook',
  slow: 'the normal answer, after Coregate-Scenario-Delay-Ms (default 2000); beyond the core time-out it is a real 504',
};

export function isScenarioName(name: string): name is ScenarioName {
  return (scenarioNames as readonly string[]).includes(name);
}

/** The scenarios a client receives 202 for, settled later by the pending worker. */
export function answersAccepted(scenario: Scenario | undefined): boolean {
  return scenario !== undefined && (scenario.name === 'async-executed' || scenario.name === 'async-rejected');
}

/**
 * When an accepted (202) operation is due: an async scenario's, or a slow one's (answered 202
 * because the client asked), after its delay; the pending worker, which takes operations one at
 * a time, then never waits out a slow core's delay for everyone else.
 */
export function dueAfterMs(scenario: Scenario | undefined, accepted: boolean): number {
  if (scenario === undefined || !accepted) return 0;
  return answersAccepted(scenario) || scenario.name === 'slow' ? scenario.delayMs : 0;
}
