// Joins compiled modules (dist/, tsc's output) into bundles with esbuild: the `coregate` command's
// (dist/src/cli/bundle/, scripts/build.mjs) and the test files' (dist/bundled/, scripts/test.mjs;
// docs/testing.md, "Bundled test files").
// docs/performance.md, "Start-up", says why: a process that loads ~1,000 modules one by one spent
// ~1 s of CPU on it before its first line of work. A bundle runs tsc's code as it is: esbuild
// joins modules and compiles nothing.
//
// What stays a module of its own, loaded from node_modules at run time, is `externalPackages`,
// each with its reason. A module loaded by a path computed at run time (a child process's script,
// a worker's source) is not in a bundle at all. Every bundled module keeps its own location:
// `import.meta.url` in the compiled sources, and `__dirname` / `__filename` in the packages'
// CommonJS modules, are replaced by those of the module's own file, as if it had been loaded alone
// (the console's static files beside src/console, Swagger UI's beside its package's code).
import { readFileSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

/** Packages loaded from node_modules as they are, never bundled: why joining each would change what it does. */
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

const ownLocations = {
  name: 'coregate-own-locations',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('node:') || isExternal(args.path) ? { path: args.path, external: true } : undefined));
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
      // A shebang stays the first line.
      const shebang = text.startsWith('#!') ? text.slice(0, text.indexOf('\n') + 1) : '';
      return { contents: shebang + preamble.join('') + text.slice(shebang.length), loader: 'js' };
    });
  },
};

/**
 * Bundles the compiled modules `entryPoints` into `outdir` (emptied first), each entry at its path
 * under `outbase`, with what entries share, and what they load on first use (a dynamic import), in
 * `outdir/chunks/`.
 */
export async function bundle({ entryPoints, outdir, outbase }) {
  rmSync(outdir, { recursive: true, force: true });
  const result = await esbuild.build({
    entryPoints,
    outdir,
    outbase,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The packages' CommonJS modules call require() for Node's own modules: an ES module has none.
    banner: { js: "import { createRequire as __coregateCreateRequire } from 'node:module'; const require = __coregateCreateRequire(import.meta.url);" },
    plugins: [ownLocations],
    logLevel: 'warning',
  });
  if (result.errors.length > 0) throw new Error(`bundling ${outdir} failed: ${result.errors.length} errors`);
}

/** The `coregate` command's program, bundled: dist/src/cli/coregate.cjs loads it (src/cli/coregate.cts). */
export const commandBundleDir = 'dist/src/cli/bundle';

/** Bundles the compiled program (dist/src/cli/main.js) into commandBundleDir, after tsc. */
export function bundleCommand() {
  return bundle({ entryPoints: ['dist/src/cli/main.js'], outdir: commandBundleDir, outbase: 'dist/src/cli' });
}

/** Where the test files' bundles go: dist/bundled/test/x.test.js for dist/test/x.test.js. */
const testBundleDir = 'dist/bundled';

/** Bundles the compiled test files `files` (dist/test/...): one module each, their shared code in chunks. */
export function bundleTests(files) {
  return bundle({ entryPoints: files, outdir: testBundleDir, outbase: 'dist' });
}

/** dist/test/x.test.js -> dist/bundled/test/x.test.js */
export function bundledPathOf(compiled) {
  return compiled.replace(/^dist\//, `${testBundleDir}/`);
}
