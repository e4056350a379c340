#!/usr/bin/env node
// Builds dist/: tsc compiles the repository (tsconfig.build.json: src/, and test/, bench/, scripts/,
// examples/ in the same program), then the `coregate` command's program is bundled
// (scripts/bundle.mjs: dist/src/cli/bundle/, which dist/src/cli/coregate.cjs loads). `npm run
// build` and npm's `prepare` run it; tsc alone leaves the command's bundle as it was.
// One program for everything, incremental (dist/.tsbuildinfo), is the one `npm test` builds too
// (scripts/test.mjs): after `npm ci` the tests' build has nothing left to compile (~2.5 s instead of
// ~12.5 s on a 2-core machine), where a build of src/ alone (~7.5 s) was compiled again with the
// tests. A type error anywhere in the repository fails the build, as it fails the tests.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundleCommand } from './bundle.mjs';

/** tsc on tsconfig.build.json, its output on this process's own; answers its exit status. */
export function compile() {
  return spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' }).status ?? 1;
}

// Run as a script (npm run build, prepare); scripts/test.mjs imports compile() and bundles itself.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const status = compile();
  if (status !== 0) process.exit(status);
  await bundleCommand();
}
