// Bundles the compiled test files (dist/test/**/*.test.js) for scripts/test.mjs: one ES module per
// test file under dist/bundled/test/, with what they share in dist/bundled/chunks/ (docs/testing.md,
// "Bundled test files"; scripts/bundle.mjs says what stays out of a bundle and how each module
// keeps its own location). Each test file runs in a process of its own, which loaded ~1,000 modules
// one by one (~1.2 s of CPU, a third of the in-process lane's); its bundle loads in ~0.45 s.
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle } from './bundle.mjs';

/** Where the bundles go: dist/bundled/test/x.test.js for dist/test/x.test.js. */
export const bundledDir = 'dist/bundled';

function testFilesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFilesUnder(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

/** Bundles the compiled test files `files` (dist/test/...) into bundledDir; answers each one's bundle path. */
export async function bundleTests(files) {
  await bundle({ entryPoints: files, outdir: bundledDir, outbase: 'dist' });
  return files.map(bundledPathOf);
}

/** dist/test/x.test.js -> dist/bundled/test/x.test.js */
export function bundledPathOf(compiled) {
  return compiled.replace(/^dist\//, `${bundledDir}/`);
}

// `node scripts/bundle-tests.mjs`: bundles every compiled test file (after a build).
if (import.meta.url === pathToFileURL(resolve(process.argv[1] ?? '')).href) {
  const started = Date.now();
  const bundles = await bundleTests(testFilesUnder('dist/test'));
  console.log(`${bundles.length} test files bundled in ${Date.now() - started} ms`);
}
