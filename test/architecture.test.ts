/** Ports and adapters (docs/architecture.md, "Layers"): the core's rules know nothing of HTTP, JWT, SQL or the API. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { test } from 'node:test';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every module a file imports: static, side-effect, re-export and dynamic imports. */
const importsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)'([^']+)'/g)].map((match) => match[1] ?? '');

/** Where a relative import lands, as a path under the repository (src/store/ledger.js); packages as they are. */
function target(file: string, specifier: string): string {
  return specifier.startsWith('.') ? relative('.', normalize(join(dirname(file), specifier))) : specifier;
}

function violations(files: string[], forbiddenLayers: string[], forbiddenPackages: string[]): string[] {
  const found: string[] = [];
  for (const file of files) {
    for (const specifier of importsOf(file)) {
      const landing = target(file, specifier);
      const layer = forbiddenLayers.find((dir) => landing === dir || landing.startsWith(`${dir}/`));
      const packageName = forbiddenPackages.find((name) => (name.endsWith('/') ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`)));
      if (layer ?? packageName) found.push(`${file} imports ${specifier}`);
    }
  }
  return found;
}

test('src/core imports nothing from the store, the API, the reference core, the operations, auth or the CLI, nor fastify, kysely, pg, better-sqlite3, jose or undici', () => {
  const found = violations(
    sources('src/core'),
    ['src/store', 'src/api', 'src/reference-core', 'src/operations', 'src/auth', 'src/cli', 'src/core-http'],
    ['fastify', '@fastify/', 'kysely', 'pg', 'better-sqlite3', 'jose', 'undici'],
  );
  assert.deepEqual(found, [], found.join('\n'));
});

test('the remote core adapter (protocol, codec, circuit breaker, HttpCore) depends on src/core and the operation registry only: a bank can reuse it without the server', () => {
  const adapter = ['protocol.ts', 'codec.ts', 'circuit-breaker.ts', 'http-core-adapter.ts', 'operation-wire.ts', 'bad-command.ts'].map((name) => join('src/core-http', name));
  const found = violations(
    adapter,
    ['src/store', 'src/api', 'src/reference-core', 'src/operations', 'src/auth', 'src/cli', 'src/sandbox', 'src/main.js', 'src/server.js'],
    ['fastify', '@fastify/', 'kysely', 'pg', 'better-sqlite3', 'jose'],
  ).filter((line) => !line.endsWith(' imports ../operations/registry.js'));
  assert.deepEqual(found, [], found.join('\n'));
});

/** A file's imports with how it imports each: `type` (erased at run time), `dynamic` (import(), loaded when called) or `static`. */
function importsByKindOf(file: string): Array<{ specifier: string; kind: 'static' | 'type' | 'dynamic' }> {
  const text = readFileSync(file, 'utf8');
  const typeOnly = new Set([...text.matchAll(/^(?:import|export)\s+type\b[^;]*?\bfrom\s+'([^']+)'/gm)].map((match) => match[1] ?? ''));
  const dynamic = new Set([...text.matchAll(/\bimport\s*\(\s*'([^']+)'\s*\)/g)].map((match) => match[1] ?? ''));
  return [
    ...staticImportsOf(file).map((specifier) => ({ specifier, kind: 'static' as const })),
    ...[...typeOnly].filter((specifier) => !staticImportsOf(file).includes(specifier)).map((specifier) => ({ specifier, kind: 'type' as const })),
    ...[...dynamic].map((specifier) => ({ specifier, kind: 'dynamic' as const })),
  ];
}

/**
 * Operation folders (docs/adding-an-operation.md, docs/architecture.md "Operations"): each file of
 * src/operations/<operation>/ plays one layer's part, named by its file, and imports only what that
 * layer may. `static` lists what it may load (repository paths: a folder ending in `/` is the
 * folder and all below it; `./x.js` that file of an operation folder, its own or another's;
 * packages as they are), `type` what it may name as types only, `dynamic` what it may load when
 * called. A part may also load the same part of another operation (one layer reusing its own).
 */
const operationFolderRoles: Record<string, { plays: string; static: string[]; type?: string[]; dynamic?: string[] }> = {
  'operation.ts': {
    plays: 'the registry\'s entry: the facts and the application definition, pure (no schema library, HTTP or storage)',
    static: ['src/core/', 'src/operations/operation-definition.js', './presenter.js'],
    type: ['./schemas.js'],
    dynamic: ['./route.js', './wire.js', './core-handler.js', './examples.js'],
  },
  'presenter.ts': { plays: 'the application: the 200 bodies made of the core\'s results', static: ['src/core/'], type: ['./schemas.js'] },
  'schemas.ts': { plays: 'the API\'s request and response schemas', static: ['@sinclair/typebox', 'src/operations/schemas/', './examples.js'] },
  'examples.ts': { plays: 'the docs page\'s examples, plain data', static: ['src/core/', 'src/docs-page/demo-values.js'], type: ['src/docs-page/operation-examples.js'] },
  'route.ts': {
    plays: 'the API: its routes, the only HTTP of the folder',
    static: ['@sinclair/typebox', 'src/core/', 'src/api/', 'src/docs-page/business-security.js', 'src/operations/schemas/', './schemas.js', './presenter.js'],
  },
  'wire.ts': {
    plays: 'the remote core protocol: its schemas and codec, on src/core and the protocol\'s own modules as the adapter',
    static: ['@sinclair/typebox', 'src/core/', 'src/core-http/protocol.js', 'src/core-http/codec.js', 'src/core-http/bad-command.js', 'src/core-http/operation-wire.js'],
  },
  'core-handler.ts': {
    plays: 'the reference core: how it executes and finds the operation, never its storage',
    static: ['node:crypto', 'src/core/', 'src/reference-core/operation-handler.js', 'src/reference-core/term-deposit-interest.js'],
    type: ['src/reference-core/operation-repository.js'],
  },
  'sdk.ts': { plays: 'the SDK: its calls, with type imports only (the SDK loads no server code)', static: [], type: ['src/sdk/', './schemas.js'] },
};

/** The operation folders: every folder of src/operations that holds an operation.ts. */
const operationFolders = readdirSync('src/operations', { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && sources(join('src/operations', entry.name)).includes(join('src/operations', entry.name, 'operation.ts')))
  .map((entry) => join('src/operations', entry.name));

/** What `file` (a file of an operation folder) imports beyond what its role allows, as `file imports x (kind): ...`. */
function operationFolderViolations(file: string, imports: ReadonlyArray<{ specifier: string; kind: 'static' | 'type' | 'dynamic' }>): string[] {
  const name = file.split('/').pop() ?? '';
  const role = operationFolderRoles[name];
  if (role === undefined) return [`${file} plays no role of an operation folder: name it after one (${Object.keys(operationFolderRoles).join(', ')})`];
  const folder = dirname(file);
  /** A file of an operation folder (`src/operations/<operation>/x.js`), or undefined. */
  const operationFileOf = (landing: string) => /^src\/operations\/[^/]+\/([^/]+)$/.exec(landing)?.[1];
  const allowed = (specifier: string, patterns: readonly string[]) => {
    const landing = target(file, specifier);
    return patterns.some((pattern) =>
      pattern.startsWith('./')
        ? dirname(landing) === folder
          ? landing === join(folder, pattern.slice(2))
          : operationFileOf(landing) === pattern.slice(2)
        : pattern.endsWith('/')
          ? landing.startsWith(pattern)
          : landing === pattern || specifier === pattern,
    );
  };
  const samePart = `./${name.replace(/\.ts$/, '.js')}`;
  return imports
    .filter(({ specifier, kind }) => !allowed(specifier, kind === 'dynamic' ? (role.dynamic ?? []) : kind === 'type' ? [...role.static, samePart, ...(role.type ?? [])] : [...role.static, samePart]))
    .map(({ specifier, kind }) => `${file} imports ${specifier} (${kind}): ${name} plays ${role.plays}`);
}

test('each file of an operation folder plays one layer\'s part, named by its file, and imports only what that layer may (docs/adding-an-operation.md)', () => {
  assert.ok(operationFolders.length >= 2, `the operation folders were found: ${operationFolders.join(', ')}`);
  const found = operationFolders.flatMap((folder) => sources(folder)).flatMap((file) => operationFolderViolations(file, importsByKindOf(file)));
  assert.deepEqual(found, [], found.join('\n'));
});

test('the operation folder rule finds an import beyond a file\'s role, and a file that plays none (the check itself, on made-up imports)', () => {
  const file = (name: string) => join('src/operations/made-up', name);
  const refused: Array<[string, { specifier: string; kind: 'static' | 'type' | 'dynamic' }]> = [
    ['wire.ts', { specifier: '../../api/error-record.js', kind: 'static' }],
    ['route.ts', { specifier: '../../reference-core/storage/core-db.js', kind: 'static' }],
    ['core-handler.ts', { specifier: '@sinclair/typebox', kind: 'static' }],
    ['sdk.ts', { specifier: './schemas.js', kind: 'static' }],
    ['operation.ts', { specifier: './schemas.js', kind: 'static' }],
    ['operation.ts', { specifier: '../registry.js', kind: 'static' }],
    ['operation.ts', { specifier: '../../api/plugin.js', kind: 'dynamic' }],
    ['wire.ts', { specifier: '../other/route.js', kind: 'static' }],
    ['core-handler.ts', { specifier: './wire.js', kind: 'static' }],
  ];
  for (const [name, imported] of refused) assert.equal(operationFolderViolations(file(name), [imported]).length, 1, `${name} importing ${imported.specifier} (${imported.kind})`);
  const fine: Array<[string, { specifier: string; kind: 'static' | 'type' | 'dynamic' }]> = [
    ['operation.ts', { specifier: './route.js', kind: 'dynamic' }],
    ['operation.ts', { specifier: './schemas.js', kind: 'type' }],
    ['operation.ts', { specifier: '../../core/scopes.js', kind: 'static' }],
    ['wire.ts', { specifier: '../../core-http/protocol.js', kind: 'static' }],
    ['sdk.ts', { specifier: '../../sdk/calls.js', kind: 'type' }],
    ['core-handler.ts', { specifier: '../../reference-core/operation-repository.js', kind: 'type' }],
    ['core-handler.ts', { specifier: '../other/core-handler.js', kind: 'static' }],
    ['route.ts', { specifier: '../other/schemas.js', kind: 'static' }],
  ];
  for (const [name, imported] of fine) assert.deepEqual(operationFolderViolations(file(name), [imported]), [], `${name} importing ${imported.specifier} (${imported.kind})`);
  assert.equal(operationFolderViolations(file('helpers.ts'), []).length, 1, 'a file named after no role');
});

test('importing the operation registry loads facts and application definitions only: src/core, the registry and each folder\'s operation.ts and presenter.ts, no package (every layer reads it: docs/adding-an-operation.md)', () => {
  const reached = heavyImportsReached(['src/operations/registry.ts'], []);
  const packages = [...reached.seen].flatMap((file) => staticImportsOf(file).filter((specifier) => !specifier.startsWith('.')).map((specifier) => `${file} → ${specifier}`));
  const pure = (file: string) =>
    file.startsWith('src/core/') ||
    ['src/operations/registry.ts', 'src/operations/operation-definition.ts'].includes(file) ||
    /^src\/operations\/[^/]+\/(operation|presenter)\.ts$/.test(file);
  const impure = [...reached.seen].filter((file) => !pure(file));
  assert.ok([...reached.seen].some((file) => file.endsWith('/operation.ts')), 'the walk follows the registry\'s imports to the operations');
  assert.deepEqual(impure, [], `the registry loads more than the operations' facts:\n${impure.join('\n')}`);
  assert.deepEqual(packages, [], `the registry loads a package:\n${packages.join('\n')}`);
});

test('only src/main.ts wires the store, the core and the business API together (src/core-http/core-service.ts the remote core\'s own; the reference core over a store is built in src/reference-core/embedded-core.ts, and a command\'s remote core adapter in src/core-http/connect-remote-core.ts)', () => {
  const wiring = sources('src')
    .filter((file) => /new ReferenceCore\(|new OperationRunner\(|new HttpCore\(/.test(readFileSync(file, 'utf8')))
    .sort();
  assert.deepEqual(wiring, ['src/core-http/connect-remote-core.ts', 'src/main.ts', 'src/reference-core/embedded-core.ts']);
});

test('the store engine (src/store/engine) depends on no table module, no application layer and no HTTP: it knows connections, statements and transactions only', () => {
  const outside = ['src/store', 'src/operations', 'src/api', 'src/core-http', 'src/reference-core', 'src/auth', 'src/cli', 'src/webhooks', 'src/audit', 'src/operator', 'src/console', 'src/sandbox', 'src/main.js', 'src/server.js'];
  const found = violations(sources('src/store/engine'), outside, ['fastify', '@fastify/']).filter((line) => {
    const [file = '', specifier = ''] = line.split(' imports ');
    return !target(file, specifier).startsWith('src/store/engine/');
  });
  assert.deepEqual(found, [], found.join('\n'));
});

test('the API side (api, operations, operator, auth, webhooks, cli) does not import the reference core\'s storage (src/reference-core/storage): the core owns its data (issue 25)', () => {
  const apiSide = ['src/api', 'src/operations', 'src/operator', 'src/auth', 'src/webhooks', 'src/cli'].flatMap((dir) => sources(dir));
  // No exception: the CLI reaches the embedded core through src/core-http/core-service.ts, as a remote one through its adapter.
  const found = violations(apiSide, ['src/reference-core/storage'], []);
  assert.deepEqual(found, [], found.join('\n'));
});

/** The table names an interface of a schema module lists (`name: SomethingTable;`). */
function tablesOf(file: string, name: string): string[] {
  const body = new RegExp(`export interface ${name}[^{]*\\{([^}]*)\\}`).exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  return [...body.matchAll(/^\s*(\w+): \w+Table;/gm)].map((match) => match[1] ?? '');
}

test('the API\'s store type names none of the core\'s tables: a query of the API side on a core table does not compile (issue 25); the core narrows the shared handle to its own tables in src/reference-core/storage/core-db.ts', () => {
  const coreTables = tablesOf('src/reference-core/storage/core-schema.ts', 'CoreTables');
  const apiTables = tablesOf('src/store/schema.ts', 'ApiTables');
  assert.ok(coreTables.includes('accounts') && apiTables.includes('operations'), `the schema interfaces were read: ${coreTables.join(',')} / ${apiTables.join(',')}`);
  assert.deepEqual(apiTables.filter((table) => coreTables.includes(table)), []);
  assert.match(readFileSync('src/store/schema.ts', 'utf8'), /export interface Database extends ApiTables \{\}/);
  // Who reads the core's tables outside the core, through the narrowing: the embedded core's
  // loader and drift check at start, and the start's count of an embedded core's leftovers.
  const narrowing = sources('src')
    .filter((file) => !file.startsWith('src/reference-core/'))
    .filter((file) => importsOf(file).some((specifier) => target(file, specifier) === 'src/reference-core/storage/core-db.js'));
  assert.deepEqual(narrowing.sort(), ['src/main.ts', 'src/sandbox/drift.ts', 'src/sandbox/load.ts']);
});

/** A module and the modules it imports (relative imports of `src`, type-only ones included: a circle of types is still one design). */
function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  return new Map(
    files.map((file) => [
      file,
      importsOf(file)
        .filter((specifier) => specifier.startsWith('.'))
        .map((specifier) => target(file, specifier).replace(/\.js$/, '.ts'))
        .filter((landing) => known.has(landing)),
    ]),
  );
}

/** Every import circle of `graph`, each as the path that closes it (a.ts → b.ts → a.ts), found by a depth-first walk. */
function importCircles(graph: Map<string, string[]>): string[] {
  const circles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (module: string) => {
    path.push(module);
    onPath.add(module);
    for (const next of graph.get(module) ?? []) {
      if (onPath.has(next)) circles.push([...path.slice(path.indexOf(next)), next].join(' → '));
      else if (!done.has(next)) visit(next);
    }
    path.pop();
    onPath.delete(module);
    done.add(module);
  };
  for (const module of [...graph.keys()].sort()) if (!done.has(module)) visit(module);
  return circles;
}

test('no import circle in src: the test names the circle when one appears', () => {
  const circles = importCircles(importGraph(sources('src')));
  assert.deepEqual(circles, [], `import circles:\n${circles.join('\n')}`);
});

test('the import circle check finds a circle and names its path (the check itself, on a made-up graph)', () => {
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', []],
  ]);
  assert.deepEqual(importCircles(graph), ['a.ts → b.ts → c.ts → a.ts']);
  assert.deepEqual(importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), []);
});

/**
 * Module-level registries, in the store engine and the API's JSON reader: an empty map or set made
 * at module level fills with state of connections, transactions or requests that belongs on their
 * own objects (docs/architecture.md, "How the code is written": state lives in objects you can
 * see). The few process-wide caches that are pure say why in a comment and are listed here.
 */
const pureProcessWideCaches = new Set([
  // SQL texts of compiled prepared queries: a text is a pure function of a builder and a dialect.
  'src/store/engine/prepared-query.ts: preparedTexts',
  // Prepared updates of operation records by the shape of the change: pure queries, bounded by the code.
  'src/store/operations.ts: operationUpdates',
]);

test('the store engine and the JSON reader keep no module-level registry: state lives on the Database, the UnitOfWork or the request', () => {
  const files = [...sources('src/store/engine'), 'src/api/strict-json.ts', 'src/store/operations.ts'];
  const found = files.flatMap((file) =>
    // Any map made at module level, and any set made empty there (a set of literal codes is a constant).
    [...readFileSync(file, 'utf8').matchAll(/^(?:export )?(?:const|let) (\w+)(?::[^=]+)? = new (?:(?:WeakMap|Map|WeakSet)\b|Set(?:<.*>)?\(\))/gm)].map((match) => `${file}: ${match[1]}`),
  );
  const registries = found.filter((entry) => !pureProcessWideCaches.has(entry));
  assert.deepEqual(registries, [], `module-level registries:\n${registries.join('\n')}`);
});

/** The modules a file loads when it loads: static imports and re-exports, without `import type` and `import()`. */
const staticImportsOf = (file: string) =>
  [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\s+(?!type\b)(?:[^;'"]*?\bfrom\s+)?'([^']+)'/gm)].map((match) => match[1] ?? '');

test('an operator command loads no HTTP server, HTTP client, schema compiler, JOSE, tracing or logging library before it runs (CLI start, docs/performance.md)', () => {
  const heavy = ['fastify', '@fastify/', 'undici', '@sinclair/typebox', 'jose', '@opentelemetry/', 'pino'];
  const entries = ['src/cli/main.ts', 'src/cli/admin.ts', 'src/cli/core-session.ts', 'src/cli/store-session.ts'];
  const reached = heavyImportsReached(entries, heavy);
  assert.ok(reached.seen.has('src/store/connect.ts'), 'the walk follows the imports (it reaches the store)');
  assert.deepEqual(reached.chains, [], reached.chains.join('\n'));
});

test('the server loads undici with its first webhook delivery or its remote core, never at start: a server that sends nothing spends no CPU on it (docs/performance.md)', () => {
  const reached = heavyImportsReached(['src/main.ts', 'src/server.ts'], ['undici']);
  assert.ok(reached.seen.has('src/webhooks/endpoint-client.ts'), 'the walk reaches the webhook client');
  assert.deepEqual(reached.chains, [], reached.chains.join('\n'));
});

test('pg loads with the first PostgreSQL database: no static import from the server or the CLI reaches it, so a process on SQLite never loads it (docs/performance.md)', () => {
  const reached = heavyImportsReached(['src/main.ts', 'src/cli/main.ts', 'src/cli/admin.ts', 'src/cli/core-session.ts', 'src/cli/store-session.ts'], ['pg', 'pg-protocol', 'pg-pool']);
  assert.ok(reached.seen.has('src/store/engine/statement-queue.ts'), 'the walk reaches the engine');
  assert.deepEqual(reached.chains, [], reached.chains.join('\n'));
});

/** The chains of static imports from `entries` that reach one of the `heavy` packages, and every module walked. */
function heavyImportsReached(entries: string[], heavy: string[]): { chains: string[]; seen: Set<string> } {
  const seen = new Set<string>();
  const reached: string[] = [];
  const visit = (file: string, path: string[]) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const specifier of staticImportsOf(file)) {
      if (specifier.startsWith('.')) {
        visit(target(file, specifier).replace(/\.js$/, '.ts').replace(/\.cjs$/, '.cts'), [...path, file]);
      } else if (heavy.some((name) => (name.endsWith('/') ? specifier.startsWith(name) : specifier === name || specifier.startsWith(`${name}/`)))) {
        reached.push(`${[...path, file].join(' → ')} → ${specifier}`);
      }
    }
  };
  for (const entry of entries) visit(entry, []);
  return { chains: reached, seen };
}

test('tests name repository files from repoRoot, never by a path relative to their own module: the runner runs them compiled from dist/test (docs/testing.md)', () => {
  const relativeToModule = sources('test')
    .filter((file) => file !== join('test', 'helpers', 'repo-root.ts'))
    .filter((file) => /new URL\(\s*['`]\.{1,2}\/[^'`]*['`]\s*,\s*import\.meta\.url\s*\)|import\.meta\.(dirname|filename)/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(relativeToModule, [], 'use join(repoRoot, …) from test/helpers/repo-root.ts');
});

/**
 * Time is a parameter (docs/architecture.md, "Time"): whatever reads the time or waits is handed a
 * Clock (src/core/clock.ts), so that a test runs the service on a fake one. Outside src/clock, no
 * module reads the wall clock (`Date.now`, a `new Date()` or `Date()` of no argument), starts a
 * timer of its own (`setTimeout`, `setInterval`, node:timers, `AbortSignal.timeout`), or calls
 * `timeOrderedUuid`/`todayUtc` without the time they are built from. A clock's own timers
 * (`clock.setTimeout(...)`) and a date made of a given time (`new Date(nowMs)`) are what the rule asks for.
 *
 * Not time, so not in the rule: `setImmediate`, `process.nextTick` and `queueMicrotask` schedule
 * work after the current turn, with no duration and no reading of the time.
 */
const timeLeaks: Array<{ what: string; pattern: RegExp }> = [
  { what: 'reads the wall clock (Date.now)', pattern: /\bDate\.now\b/ },
  { what: 'reads the wall clock (new Date() of no argument)', pattern: /\bnew\s+Date\b(?!\s*\(\s*[^\s)])/ },
  { what: 'reads the wall clock (Date() called as a function)', pattern: /(?<![\w$.]|\bnew\s+)Date\s*\(/ },
  { what: 'starts a raw timer (setTimeout/setInterval)', pattern: /(?<![\w$.])(?:setTimeout|setInterval)\s*\(|\bglobalThis\.(?:setTimeout|setInterval)\b/ },
  { what: 'starts a raw timer (node:timers)', pattern: /['"](?:node:)?timers(?:\/promises)?['"]/ },
  { what: 'starts a raw timer (AbortSignal.timeout)', pattern: /\bAbortSignal\.timeout\b/ },
  { what: 'reads a stopwatch (performance.now, process.hrtime)', pattern: /\bperformance\.now\b|\bprocess\.hrtime\b/ },
  { what: 'calls timeOrderedUuid without its time', pattern: /\btimeOrderedUuid\s*\(\s*\)/ },
  { what: 'calls todayUtc without its time', pattern: /\btodayUtc\s*\(\s*\)/ },
];

/** Where the wall clock and raw timers belong, for good. */
const timeKeepers = [
  // The system's clock: the one place that reads the time and starts Node's timers.
  'src/clock/',
  // The SDK runs in a bank's application, not in coregate: its `now` and `sleep` options
  // (CoregateClientOptions, src/sdk/client.ts) default to the wall clock and Node's timers, and a
  // test of it hands in its own; its calls' time-outs are fetch's AbortSignal.timeout.
  'src/sdk/',
];

/**
 * A stopwatch measures how long something took, never when: a monotonic reading that a fake
 * clock must not shape. Each use is named; a deadline or a timestamp goes through the Clock.
 */
const stopwatches = new Set([
  // A readiness probe's latency, in the readiness answer.
  'src/health.ts',
  // A core call's duration, for its histogram (src/metrics).
  'src/operations/core-call.ts',
]);

/**
 * Files that still leak time, each with why it may for now. The test fails when one of them no
 * longer leaks, so that the list only shrinks: take it off when it is mended.
 */
const timeLeaksForNow = new Map([
  // Not a leak but another thread: the SQLite checkpointer's worker runs a script of its own (a
  // string evaluated in the worker), whose interval no Clock object can reach across the thread.
  ['src/store/engine/wal-checkpointer.ts', 'the worker thread\'s own script keeps its own interval'],
]);

/**
 * Each line of `file` that leaks time, as `file:line: what`. Skipped: comment lines (a comment may
 * name what it must not call) and the declaration of a clock's own method (`setTimeout(callback:
 * () => void, delayMs: number): Timer;`, in an interface or a class: its return type follows it).
 */
function timeLeaksOf(file: string, text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (/^\s*(?:\/\/|\/\*|\*)/.test(line)) return;
    if (/^\s*(?:setTimeout|setInterval)\s*\(.*\)\s*:\s*[\w.<>]+\s*[;{]\s*$/.test(line)) return;
    for (const { what, pattern } of timeLeaks) {
      if (what.startsWith('reads a stopwatch') && stopwatches.has(file)) continue;
      if (pattern.test(line)) found.push(`${file}:${index + 1}: ${what}`);
    }
  });
  return found;
}

test('time is a parameter: outside src/clock (and the SDK) no module reads the wall clock, starts a raw timer or calls timeOrderedUuid/todayUtc without their time (docs/architecture.md, "Time")', () => {
  const leaks = sources('src')
    .filter((file) => !timeKeepers.some((dir) => file.startsWith(dir)) && !timeLeaksForNow.has(file))
    .flatMap((file) => timeLeaksOf(file, readFileSync(file, 'utf8')));
  assert.deepEqual(leaks, [], `hand these a Clock (src/core/clock.ts):\n${leaks.join('\n')}`);
});

test('time is a parameter: every file let off for now still leaks time, so that the list only shrinks (take a mended file off it)', () => {
  const mended = [...timeLeaksForNow.keys()].filter((file) => timeLeaksOf(file, readFileSync(file, 'utf8')).length === 0);
  assert.deepEqual(mended, [], `no longer leaks time, take it off timeLeaksForNow: ${mended.join(', ')}`);
});

test('the time rule finds each leak it names, and lets a clock\'s timers, a date of a given time and a comment pass (the check itself, on made-up lines)', () => {
  const leaks = [
    'const t = Date.now();',
    'const now = options.now ?? Date.now;',
    'const d = new Date();',
    'const d = new Date;',
    'const text = Date();',
    'setTimeout(() => {}, 10);',
    'const handle = globalThis.setInterval(tick, 10);',
    "import { setTimeout as pause } from 'node:timers/promises';",
    'const signal = AbortSignal.timeout(1000);',
    'const startedAt = performance.now();',
    'const id = timeOrderedUuid();',
    'const day = todayUtc( );',
  ];
  for (const line of leaks) assert.equal(timeLeaksOf('src/made-up.ts', line).length, 1, line);
  const fine = [
    'clock.setTimeout(() => {}, 10);',
    'this.#options.clock.setTimeout(() => void this.flush(), flushDelayMs, { background: true });',
    'const at = new Date(nowMs).toISOString();',
    'const date = new Date( day * msPerDay );',
    'setImmediate(() => this.#flush());',
    'const id = timeOrderedUuid(clock.now());',
    'const day = todayUtc(dateOf(clock));',
    ' * never Date.now() here: the clock says',
    '// setTimeout(…) would not move with a fake clock',
    'const updated = toDate(value);',
    '  setTimeout(callback: () => void, delayMs: number, options?: TimerOptions): Timer;',
  ];
  for (const line of fine) assert.deepEqual(timeLeaksOf('src/made-up.ts', line), [], line);
  assert.deepEqual(timeLeaksOf('src/health.ts', 'const startedAt = performance.now();'), [], 'a named stopwatch');
});
