/**
 * A bound on the distinct values one label may take. Every distinct label value is a time series
 * kept in memory for the life of the process and stored by Prometheus; a label fed from outside
 * (a realm name in a URL) or from a caller's mistake must not grow without bound.
 */

/** What a label reads once its budget is spent. */
export const overBudgetLabel = 'other';

export class LabelBudget {
  readonly #limit: number;
  readonly #seen = new Set<string>();

  /** `limit`: how many distinct values this label may take before the rest read `other`. */
  constructor(limit: number) {
    this.#limit = limit;
  }

  /** The value itself while it is known or the budget has room, `other` afterwards. */
  label(value: string): string {
    if (this.#seen.has(value)) return value;
    if (this.#seen.size >= this.#limit) return overBudgetLabel;
    this.#seen.add(value);
    return value;
  }
}
