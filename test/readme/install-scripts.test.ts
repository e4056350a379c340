/**
 * README, beside the EBADENGINE note: `npm ci` runs the install scripts of better-sqlite3 and
 * esbuild without npm 11's "install scripts not yet covered by allowScripts" warning, because
 * package.json's `allowScripts` names every package of the lock file that has an install script.
 * The entries are names without versions: the lock records no tarball URLs, from which npm takes
 * the version it trusts, so a pinned entry would never match. Where the installed npm has the
 * `install-scripts` command (npm 11.19 and later), it is asked too.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/repo-root.js';

const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean; resolved?: string }> };
const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');

/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
const nameOf = (path: string): string => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);

test('allowScripts names exactly the lock file\'s packages with install scripts, by name only (the lock has no resolved URLs), and the README says why', () => {
  const withScripts = [...new Set(Object.entries(lock.packages).filter(([path, entry]) => path !== '' && entry.hasInstallScript === true).map(([path]) => nameOf(path)))].sort();
  assert.deepEqual(withScripts, ['better-sqlite3', 'esbuild'], 'the packages with install scripts (a new one: review it, then add it)');
  const allowed = manifest.allowScripts ?? {};
  assert.deepEqual(Object.keys(allowed).sort(), withScripts, 'package.json\'s allowScripts names each of them, and nothing else');
  assert.ok(Object.values(allowed).every((value) => value === true));
  const resolvedUrls = Object.values(lock.packages).some((entry) => entry.resolved !== undefined);
  if (!resolvedUrls) {
    for (const key of Object.keys(allowed)) assert.doesNotMatch(key, /.@/, `${key}: a pinned entry never matches a lock without resolved URLs`);
  }
  assert.match(readme, /`allowScripts`[\s\S]{0,400}better-sqlite3[\s\S]{0,200}esbuild/, 'the README explains the field beside the EBADENGINE note');
});

test('npm itself finds no install script left to review (when it has the install-scripts command)', async (t) => {
  const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile('npm', ['install-scripts', 'ls', '--json'], { cwd: repoRoot, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
  if (run.code !== 0 && /Unknown command|unknown command/i.test(run.stdout + run.stderr)) {
    t.skip('this npm has no install-scripts command (before npm 11.19): it ignores allowScripts');
    return;
  }
  assert.equal(run.code, 0, run.stdout + run.stderr);
  const pending = (JSON.parse(run.stdout) as { allowScripts?: Array<{ name: string }> }).allowScripts ?? [];
  assert.deepEqual(pending.map((entry) => entry.name), [], run.stdout);
});
