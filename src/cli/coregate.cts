#!/usr/bin/env node
/**
 * The `coregate` command's entry: sizes libuv's thread pool (thread-pool-size.cts) before the
 * pool exists, then loads the program (main.ts). CommonJS on purpose: Node reads an ES module
 * entry through the thread pool, and the pool takes its size from UV_THREADPOOL_SIZE when it is
 * first used.
 */
import { threadPoolSizeFor } from './thread-pool-size.cjs';

process.env.UV_THREADPOOL_SIZE = String(threadPoolSizeFor(process.env.UV_THREADPOOL_SIZE));
void import('./main.js');
