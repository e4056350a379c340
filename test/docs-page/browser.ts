/**
 * Chromium for the docs page tests, through playwright-core: COREGATE_CHROMIUM or Debian's
 * /usr/bin/chromium. Missing: the tests skip with a message saying so, except under CI=true where
 * a missing browser is a failure (.ci/run installs it).
 */
import { existsSync } from 'node:fs';

export const chromiumPath = process.env.COREGATE_CHROMIUM ?? '/usr/bin/chromium';

/** A reason to skip the browser tests, or undefined when Chromium is there. */
export function chromiumMissing(): string | undefined {
  if (existsSync(chromiumPath)) return undefined;
  const reason = `Chromium not found at ${chromiumPath} (set COREGATE_CHROMIUM or install Debian's chromium package)`;
  if (process.env.CI === 'true') throw new Error(`${reason}: required when CI=true`);
  console.warn(`# skipping the docs page browser tests: ${reason}`);
  return reason;
}
