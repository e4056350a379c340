/**
 * issue 12 item 10: `npm ci` on the Node.js the project promises (>= 20.19) prints no EBADENGINE
 * warning. npm records each package's `engines` in the lock file; every one of them must accept
 * Node.js 20.19.0 (fastify's light-my-request is pinned to 6.6.0 for this: 6.8 needs cookie 2,
 * which declares Node.js 22; README "Quick start").
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from '../helpers/server.js';

// semver comes with npm's own dependency tree (installed from the lock file); read it as CommonJS.
const semver = createRequire(import.meta.url)('semver') as { satisfies(version: string, range: string): boolean };

test('issue 12 item 10: every package of the lock file accepts Node.js 20.19.0 (no EBADENGINE warning), and package.json promises >= 20.19', () => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  assert.equal(manifest.engines?.node, '>=20.19');
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> };
  const refusing = Object.entries(lock.packages)
    .filter(([path, entry]) => path !== '' && typeof entry.engines?.node === 'string' && !semver.satisfies('20.19.0', entry.engines.node))
    .map(([path, entry]) => `${path} (node ${entry.engines?.node})`);
  assert.deepEqual(refusing, []);
});
