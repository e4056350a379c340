// Bundles the compiled test files (dist/test/**/*.test.js) for scripts/test.mjs: one ES module per
// test file under dist/bundled/test/, with what they share in dist/bundled/chunks/ (docs/testing.md,
// "Bundled test files"). Why: each test file runs in a process of its own, and loading ~1,000
// modules one by one (the service's ~250, kysely's ~260, ajv's, fastify's...) cost each of them
// ~1.2 s of CPU, a third of the in-process lane's CPU; a bundle loads in ~0.45 s. The bundles run
// the same compiled code: esbuild only joins modules, it compiles nothing (tsc did).
//
// What stays a module of its own, loaded from node_modules at run time:
// - native addons (better-sqlite3) and what loads files beside its own code while it runs
//   (`externalPackages` below, each with its reason);
// - every module a test or the service loads by a path computed at run time (a child process's
//   script, a worker's source): those are not in the bundle's graph at all.
// Each bundled module keeps its own location: `import.meta.url` in the compiled sources, and
// `__dirname` / `__filename` in the packages' CommonJS modules, are replaced by the module's own
// file's, as if it had been loaded alone (a demo data file beside src/sandbox, a static directory
// beside a package's code).
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

/** Where the bundles go: dist/bundled/test/x.test.js for dist/test/x.test.js. */
export const bundledDir = 'dist/bundled';

/**
 * Packages loaded from node_modules as they are, never bundled. A package's reason is why joining
 * it would change what it does.
 */
const externalPackages = new Map([
  ['better-sqlite3', 'a native addon, found through its own bindings at run time'],
  ['undici', 'loaded on first use by the webhooks and the remote core (dynamic import); its bundled CommonJS exports lost their classes'],
  ['@opentelemetry/*', "the SDK's packages are loaded on first use when tracing is on (bundled, their exports were lost), and all of them must share @opentelemetry/api's one copy"],
  ['thread-stream', "pino's transports start it as a worker from its own file"],
  ['pino-pretty', 'loaded by name by pino when asked for'],
  ['pg-native', "pg's optional native driver, absent"],
  ['playwright-core', 'drives a browser through files it finds beside its own code'],
  ['esbuild', 'a native binary, used by the build itself'],
  ['typescript', 'compiles, never runs in a test'],
  ['tsx', 'a loader, used only by a test file run on its own'],
]);

function packageNameOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Whether a package loads from node_modules as it is: named in externalPackages, or its scope is (`@scope/*`). */
function isExternal(specifier) {
  const name = packageNameOf(specifier);
  return externalPackages.has(name) || (name.startsWith('@') && externalPackages.has(`${name.split('/')[0]}/*`));
}

function testFilesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFilesUnder(path);
    return entry.name.endsWith('.test.js') ? [path] : [];
  });
}

const locationPlugin = {
  name: 'coregate-locations',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:') || isExternal(args.path)) return { path: args.path, external: true };
      return undefined;
    });
    // The compiled sources (ES modules): import.meta.url is the module's own file's URL.
    build.onLoad({ filter: /[\\/]dist[\\/].*\.js$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      return { contents: text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)), loader: 'js' };
    });
    // The packages: __dirname and __filename of a CommonJS module, import.meta.url of an ES module.
    build.onLoad({ filter: /[\\/]node_modules[\\/].*\.(c|m)?js$/ }, (args) => {
      let text = readFileSync(args.path, 'utf8');
      if (text.includes('import.meta.url')) text = text.replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href));
      const preamble = [];
      if (/\b__dirname\b/.test(text)) preamble.push(`var __dirname = ${JSON.stringify(dirname(args.path))};`);
      if (/\b__filename\b/.test(text)) preamble.push(`var __filename = ${JSON.stringify(args.path)};`);
      // A shebang must stay the first line.
      const shebang = text.startsWith('#!') ? text.slice(0, text.indexOf('\n') + 1) : '';
      return { contents: shebang + preamble.join('') + text.slice(shebang.length), loader: 'js' };
    });
  },
};

/** Bundles the compiled test files `files` (dist/test/...) into bundledDir; answers each one's bundle path. */
export async function bundleTests(files) {
  rmSync(bundledDir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints: files,
    outdir: bundledDir,
    outbase: 'dist',
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The packages' CommonJS modules call require() for Node's own modules: an ES module has none.
    banner: { js: "import { createRequire as __coregateCreateRequire } from 'node:module'; const require = __coregateCreateRequire(import.meta.url);" },
    plugins: [locationPlugin],
    logLevel: 'warning',
  });
  if (result.errors.length > 0) throw new Error(`bundling the tests failed: ${result.errors.length} errors`);
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
