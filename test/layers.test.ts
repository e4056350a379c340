/**
 * The layer order (docs/architecture.md, "Layers"): each module of src/ imports from its own layer
 * or the layers below it, never from one above, so that a lower layer can be read, tested and
 * reused without what is built on it. From the bottom:
 *   1. the rules and the port (src/core), and the operations' facts: the registry, each operation's
 *      definition, schemas and examples (docs/adding-an-operation.md);
 *   2. what every part runs on: time and background loops (src/clock), caches, logging, tracing,
 *      configuration, the HTTP connection guards;
 *   3. the store (src/store), the shared limits (src/limits) and the configuration;
 *   4. the cores: the reference core (src/reference-core, and each operation's core-handler.ts) and
 *      the remote core's adapter (the protocol, codec, circuit breaker and HttpCore of
 *      src/core-http, and each operation's wire.ts);
 *   5. the services over the store: authentication (src/auth), the audit trail (src/audit), signed
 *      events (src/webhooks);
 *   6. the application layer (src/operations);
 *   7. the sandbox (src/sandbox), which decorates the core and loads data through every layer;
 *   8. HTTP and what serves it: the business API (each operation's route.ts), the operator API and
 *      console, the docs page, metrics, the home page;
 *   9. the composition: the wiring (src/main.ts, src/server.ts, src/index.ts), the CLI, the remote
 *      core's own server (src/core-http's service), the conformance kit and the SDK (each
 *      operation's sdk.ts).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './helpers/repo-root.js';

/** Path prefixes (relative to src/) of each layer, bottom first; the longest prefix decides. */
const layers: ReadonlyArray<readonly string[]> = [
  // The rules, the port, and the operations' facts: the registry and each operation's definition,
  // schemas and examples (plain data: docs/adding-an-operation.md).
  [
    'core/',
    'operations/registry.ts',
    'operations/operation-definition.ts',
    'operations/schemas/',
    'operations/*/operation.ts',
    'operations/*/presenter.ts',
    'operations/*/schemas.ts',
    'operations/*/examples.ts',
    'docs-page/demo-values.ts',
    'docs-page/operation-examples.ts',
  ],
  ['clock/', 'cache/', 'log.ts', 'log-destination.ts', 'tracing/', 'route-facts.ts', 'version.ts', 'schema-compilers.ts', 'connection-limits.ts', 'skipped-bodies.ts', 'health.ts'],
  ['store/', 'limits/', 'config.ts'],
  [
    'reference-core/',
    'operations/*/core-handler.ts',
    'core-http/protocol.ts',
    'core-http/codec.ts',
    'core-http/circuit-breaker.ts',
    'core-http/http-core-adapter.ts',
    'core-http/operation-wire.ts',
    'core-http/bad-command.ts',
    'core-http/core-config.ts',
    'operations/*/wire.ts',
  ],
  ['auth/', 'audit/', 'webhooks/'],
  ['operations/'],
  ['sandbox/'],
  ['api/', 'operator/', 'console/', 'docs-page/', 'metrics/', 'web/', 'request-target.ts', 'operations/*/route.ts', 'core-http/protocol-violation-reporter.ts'],
  ['main.ts', 'server.ts', 'index.ts', 'cli/', 'core-http/', 'conformance/', 'sdk/', 'operations/*/sdk.ts'],
];

/** Whether `prefix` names `module`: a folder (ending in `/`) and all below it, or the file; `*` is one folder's name. */
function names(prefix: string, module: string): boolean {
  const pattern = prefix.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]+');
  return new RegExp(`^${pattern}${prefix.endsWith('/') ? '' : '$'}`).test(module);
}

/** The layer (its index) of a module, by the longest prefix that names it. */
function layerOf(module: string, order: ReadonlyArray<readonly string[]>): number | undefined {
  let best: { layer: number; length: number } | undefined;
  order.forEach((prefixes, layer) => {
    for (const prefix of prefixes) {
      const matches = names(prefix, module);
      if (matches && (best === undefined || prefix.length > best.length)) best = { layer, length: prefix.length };
    }
  });
  return best?.layer;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Imports (static, dynamic and type-only) of src/ modules by src/ modules, as src-relative paths. */
function importsOf(files: Array<{ module: string; text: string }>): Array<{ from: string; to: string; dynamic: boolean }> {
  return files.flatMap(({ module, text }) =>
    [...text.matchAll(/(\bfrom\s*|\bimport\s*\(\s*)'(\.{1,2}\/[^']+)'/g)].map((match) => ({
      from: module,
      to: normalize(join(dirname(module), match[2] ?? '')).split('\\').join('/').replace(/\.js$/, '.ts'),
      dynamic: (match[1] ?? '').startsWith('import'),
    })),
  );
}

/**
 * An operation's entry (operation.ts) names the parts of its folder each layer plays, loaded when
 * that layer asks the registry for them (`partsOf`): an index, not a dependency of the entry.
 */
function isPartIndex(from: string, to: string, dynamic: boolean): boolean {
  const folder = /^operations\/[^/]+\//.exec(from)?.[0];
  return dynamic && folder !== undefined && from === `${folder}operation.ts` && to.startsWith(folder);
}

/** The imports that run upward, as "from → to (layer a → b)". */
function upwardImports(files: Array<{ module: string; text: string }>, order: ReadonlyArray<readonly string[]>): string[] {
  return importsOf(files).flatMap(({ from, to, dynamic }) => {
    const [a, b] = [layerOf(from, order), layerOf(to, order)];
    if (a === undefined || b === undefined || b <= a || isPartIndex(from, to, dynamic)) return [];
    return [`src/${from} → src/${to} (layer ${a + 1} → ${b + 1})`];
  });
}

const src = join(repoRoot, 'src');
const modules = sourceFiles(src).map((path) => ({ module: relative(src, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));

test('every module of src/ has a layer: a new folder or top-level module is placed in the order', () => {
  assert.deepEqual(modules.map(({ module }) => module).filter((module) => layerOf(module, layers) === undefined), []);
});

test('no upward import: each module imports from its own layer or below (core, base, store, cores, services, operations, sandbox, HTTP, composition)', () => {
  assert.deepEqual(upwardImports(modules, layers), []);
});

test('the layer rule finds an upward import and lets a downward one pass (the check itself, on made-up modules)', () => {
  const made = [
    { module: 'store/clients.ts', text: "import type { ClientJwks } from '../auth/client-metadata.js';" },
    { module: 'auth/keyring.ts', text: "import type { Queryable } from '../store/queryable.js';\nconst later = await import('../core/money.js');" },
    { module: 'reference-core/storage/load.ts', text: "import type { SandboxData } from '../../sandbox/data-file.js';" },
  ];
  assert.deepEqual(upwardImports(made, layers), [
    'src/store/clients.ts → src/auth/client-metadata.ts (layer 3 → 5)',
    'src/reference-core/storage/load.ts → src/sandbox/data-file.ts (layer 4 → 7)',
  ]);
});
