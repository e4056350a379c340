#!/usr/bin/env node
// Builds dist/: tsc compiles src/ (tsconfig.build.json), then the `coregate` command's program is
// bundled (scripts/bundle.mjs: dist/src/cli/bundle/, which dist/src/cli/coregate.cjs loads). `npm
// run build` and npm's `prepare` run it; tsc alone leaves the command's bundle as it was.
import { spawnSync } from 'node:child_process';
import { bundleCommand } from './bundle.mjs';

const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
await bundleCommand();
