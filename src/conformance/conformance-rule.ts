/** One rule of the port the kit checks (docs/conformance.md, "The rules"). */
import type { ConformanceContext } from './conformance-context.js';

export interface ConformanceRule {
  /** Stable: reports, `--only` and the example core's `--break` tests name rules by it. */
  id: string;
  /** The rule in the project's words (docs/core-port.md). */
  title: string;
  /** Resolves when the core keeps the rule; throws RuleFailure, or RuleSkipped with why it cannot run here. */
  run(context: ConformanceContext): Promise<void>;
}
