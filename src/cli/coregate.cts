#!/usr/bin/env node
/**
 * The `coregate` command's entry: sizes libuv's thread pool (thread-pool-size.cts) before the
 * pool exists, then loads the program (main.ts). CommonJS on purpose: Node reads an ES module
 * entry through the thread pool, and the pool takes its size from UV_THREADPOOL_SIZE when it is
 * first used.
 */
import { threadPoolSizeFor } from './thread-pool-size.cjs';

process.env.UV_THREADPOOL_SIZE = String(threadPoolSizeFor(process.env.UV_THREADPOOL_SIZE));
// The program (main.ts) as the build bundled it (scripts/build.mjs; docs/performance.md,
// "Start-up"): its modules joined into one file and a few chunks, which load in about a second
// less of CPU than main.js's ~1,000 modules one by one. A name, not a literal: tsc does not look
// for a file the build makes after it.
const program = './bundle/main.js';
import(program).catch((error: NodeJS.ErrnoException) => {
  if (error.code === 'ERR_MODULE_NOT_FOUND' && error.message.includes('bundle/main.js')) {
    process.stderr.write(`coregate: ${__dirname}/bundle/main.js is missing: build with \`npm run build\` (tsc alone does not bundle the program)\n`);
    process.exit(1);
  }
  throw error;
});
