#!/usr/bin/env node
// Builds dist/ (the compiled CLI that tests and the torture run spawn).
import { spawnSync } from 'node:child_process';

const build = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
process.exit(build.status ?? 1);
