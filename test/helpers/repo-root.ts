/**
 * The repository's root directory, found from this module's own place: the nearest directory
 * above it that holds coregate's package.json. Tests name files by it (`join(repoRoot, 'docs/…')`),
 * never by a path relative to their own module, because the runner (scripts/test.mjs) runs the
 * compiled tests from dist/test while `npx tsx --test` runs them from test/.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'coregate') return `${dir}/`;
    if (dirname(dir) === dir) throw new Error(`no coregate package.json above ${from}`);
  }
}

/** The repository root, with a trailing slash, the working directory of spawned CLI processes. */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)));
