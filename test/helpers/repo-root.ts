/**
 * The repository's root directory, found from this module's own place: the nearest directory
 * above it that holds coregate's package.json. Tests name files by it (`join(repoRoot, 'docs/…')`),
 * never by a path relative to their own module, because the runner (scripts/test.mjs) runs the
 * compiled tests from dist/test while `npx tsx --test` runs them from test/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'coregate') return `${dir}/`;
    if (dirname(dir) === dir) throw new Error(`no coregate package.json above ${from}`);
  }
}

/** The repository root, with a trailing slash, the working directory of spawned CLI processes. */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)));

/** True when the tests run compiled, from dist/test (scripts/test.mjs), rather than their sources (tsx). */
const runsCompiled = fileURLToPath(import.meta.url).includes(`${sep}dist${sep}test${sep}`);

/**
 * The URL to import a module of the repository by its path (`src/operations/x/operation.js`): the
 * compiled one under dist/ when the tests run compiled, else the source (tsx reads `.js` as `.ts`).
 * For a test that finds modules by scanning folders; a module it knows is imported statically.
 */
export function repoModuleUrl(path: string): string {
  return pathToFileURL(join(repoRoot, runsCompiled ? 'dist' : '', path)).href;
}
