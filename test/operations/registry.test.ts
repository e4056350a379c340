/**
 * An operation lives in one place (docs/adding-an-operation.md): its folder holds its parts, the
 * registry (src/operations/registry.ts) lists it once, and every other list that names operations
 * is derived from the registry. Each test here checks one derived list against the registry, and
 * the last one that no source outside an operation's folder names an operation by hand.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import Fastify, { type RouteOptions } from 'fastify';
import { tokenRouteSchema } from '../../src/auth/route-schemas.js';
import { operationResourceOf } from '../../src/api/framework-errors.js';
import { sharedSchemas } from '../../src/api/plugin.js';
import type { BusinessRouteConfig } from '../../src/api/request-context.js';
import { BusinessCalendar } from '../../src/core/business-calendar.js';
import type { CoreBankingPort, CoreOutcome } from '../../src/core/port.js';
import { coreRoutes } from '../../src/core-http/core-routes.js';
import { HttpCore } from '../../src/core-http/http-core-adapter.js';
import { apiTags, securitySchemes } from '../../src/docs-page/openapi-info.js';
import { requestExample, successExamples } from '../../src/docs-page/demo-examples.js';
import type { OperationRunner } from '../../src/operations/operation-runner.js';
import { businessOperations, operationNames, operations, operationScopes, partsOf } from '../../src/operations/registry.js';
import { OperationViewSchema } from '../../src/operations/schemas/operation-view.js';
import { ReferenceCore, type ReferenceCoreOptions } from '../../src/reference-core/reference-core.js';
import { scenarioCore } from '../../src/sandbox/scenario-core.js';
import { CoregateClient } from '../../src/sdk/client.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { faultedSettling, faultedWrites } from '../helpers/faulty-core.js';
import { repoModuleUrl, repoRoot } from '../helpers/repo-root.js';

/** The folder of each registered operation: the one whose operation.ts exports it. */
async function folderOf(name: string): Promise<string> {
  for (const entry of readdirSync(join(repoRoot, 'src/operations'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const folder = join('src/operations', entry.name);
    if (!readdirSync(join(repoRoot, folder)).includes('operation.ts')) continue;
    const module = (await import(repoModuleUrl(join(folder, 'operation.js')))) as Record<string, { name?: unknown }>;
    if (Object.values(module).some((exported) => exported?.name === name)) return folder;
  }
  throw new Error(`no folder of src/operations exports the operation ${name}`);
}

/** Every part a folder holds, by file (docs/adding-an-operation.md). */
const folderParts = ['operation.ts', 'schemas.ts', 'route.ts', 'wire.ts', 'core-handler.ts', 'sdk.ts', 'examples.ts'];

/** A route's path with its parameters filled in, as a client sends it. */
const concrete = (path: string) => path.replace(/:([A-Za-z]+)/g, 'x1');

test('the registry lists each operation once, with distinct names, port methods and paths, each in a folder of its own that holds every part', async () => {
  assert.ok(operations.length >= 2);
  const unique = (values: string[]) => assert.equal(new Set(values).size, values.length, values.join(', '));
  unique(operations.map((operation) => operation.name));
  unique(operations.flatMap((operation) => [operation.port.execute, operation.port.lookup]));
  unique(operations.flatMap((operation) => [operation.route.path, ...operation.route.readPaths]));
  assert.deepEqual(operationNames, operations.map((operation) => operation.name));
  assert.deepEqual([...businessOperations.keys()], operationNames, 'the pending worker and the reconciler find every operation by name');
  const folders = await Promise.all(operations.map((operation) => folderOf(operation.name)));
  unique(folders);
  for (const folder of folders) {
    const files = readdirSync(join(repoRoot, folder));
    assert.deepEqual(folderParts.filter((part) => !files.includes(part)), [], `${folder} holds every part`);
  }
  for (const operation of operations) {
    assert.equal(Object.keys(operation.scopes)[0], operation.scope, `${operation.name}: its own scope comes first`);
    assert.ok(operation.route.path.startsWith('/v1/'), `${operation.name}: a route of the business API`);
  }
});

test('every part loader of every operation loads its part: the route, the wire, the core handler, the examples', async () => {
  for (const { operation, part } of await partsOf('route')) assert.equal(typeof part.routes.register, 'function', operation.name);
  for (const { operation, part } of await partsOf('wire')) assert.match(part.wire.path, /^\/core\/v1\/[a-z-]+\/:reference$/, operation.name);
  for (const { operation, part } of await partsOf('coreHandler')) assert.equal(typeof part.handler.execute, 'function', operation.name);
  for (const { operation, part } of await partsOf('examples')) assert.equal(typeof part.examples.request, 'function', operation.name);
});

test('the token endpoint lists every operation\'s scopes (src/auth/route-schemas.ts), and the docs page declares them with what each grants', () => {
  const scopes = Object.keys(operationScopes);
  // Each scope once, in the registry's order: operations of one resource may share one.
  assert.deepEqual(scopes, [...new Set(operations.flatMap((operation) => Object.keys(operation.scopes)))]);
  const field = tokenRouteSchema.body.properties.scope as { description: string };
  assert.ok(field.description.endsWith(`Scopes: ${scopes.join(', ')}`), field.description);
  assert.equal(tokenRouteSchema.body.examples[0]?.scope, scopes.join(' '));
  assert.deepEqual(securitySchemes('sandbox').oauth2.flows.clientCredentials.scopes, operationScopes);
});

test('the framework\'s errors take the family and wrapping of the operation whose resource the path is under (src/api/framework-errors.ts)', () => {
  for (const operation of operations) {
    assert.deepEqual(operationResourceOf(concrete(operation.route.path)), { resource: operation.route.path.split('/').slice(0, 3).join('/'), family: operation.family, wrapped: operation.route.wrapped });
  }
  assert.equal(operationResourceOf('/v1/operations/x1'), undefined, 'no operation\'s resource');
});

test('the API registers each operation\'s route (its operationId, tag, scope, family, wrapping and audit) and its reads, and the shared schemas hold its schemas', async () => {
  const app = Fastify();
  const routes: RouteOptions[] = [];
  app.addHook('onRoute', (route) => void routes.push(route));
  for (const schema of sharedSchemas) app.addSchema(schema);
  const registered = await partsOf('route');
  for (const { operation, part } of registered) {
    await app.register((scope) => part.routes.register(scope, { operation, core: {} as CoreBankingPort, runner: {} as OperationRunner }));
    for (const schema of part.routes.schemas) assert.ok(sharedSchemas.includes(schema), `${operation.name}: ${String(schema.$id)} is shared`);
  }
  await app.ready();
  try {
    for (const operation of operations) {
      const own = routes.find((route) => route.url === operation.route.path && route.method === operation.route.method);
      assert.ok(own, `${operation.name}: ${operation.route.method} ${operation.route.path} is registered`);
      assert.equal(own.schema?.operationId, operation.name);
      assert.deepEqual(own.schema?.tags, [operation.tag.name]);
      assert.deepEqual((own.config as { business?: BusinessRouteConfig }).business, { family: operation.family, wrapped: operation.route.wrapped, scope: operation.scope, auditedOperation: operation.name });
      for (const path of operation.route.readPaths) {
        const read = routes.find((route) => route.url === path);
        assert.ok(read, `${operation.name}: its read ${path} is registered`);
        const business = (read.config as { business?: BusinessRouteConfig }).business;
        assert.equal(business?.family, operation.family);
        assert.equal(business?.auditedOperation, undefined, 'a read is not audited');
      }
    }
    const registeredPaths = new Set(routes.map((route) => route.url));
    assert.deepEqual(registeredPaths, new Set(operations.flatMap((operation) => [operation.route.path, ...operation.route.readPaths])), 'the folders register no other path');
  } finally {
    await app.close();
  }
  assert.equal((OperationViewSchema.properties.operation as { description?: string }).description, operationNames.join(' or '));
});

test('the remote core protocol has each operation\'s two routes (POST and GET on its reference\'s path, its port methods) before the port\'s others (src/core-http/core-routes.ts)', async () => {
  const wires = await partsOf('wire');
  const operationRows = coreRoutes.slice(0, 2 * operations.length);
  assert.deepEqual(
    operationRows.map((row) => `${row.method} ${row.path} ${row.portMethod}`),
    wires.flatMap(({ operation, part }) => [`POST ${part.wire.path} ${operation.port.execute}`, `GET ${part.wire.path} ${operation.port.lookup}`]),
  );
  const operationMethods = new Set<string>(operations.flatMap((operation) => [operation.port.execute, operation.port.lookup]));
  assert.deepEqual(coreRoutes.slice(2 * operations.length).filter((row) => operationMethods.has(row.portMethod)), [], 'no other row serves an operation');
});

test('the remote core adapter, the reference core and the sandbox\'s scenario core have each operation\'s port methods; the tests\' fake core faults each operation\'s execution and lookup', () => {
  const adapter = new HttpCore({ url: 'http://127.0.0.1:9', timeoutMs: 1_000 });
  const clock = new FakeClock(Date.UTC(2026, 2, 2));
  const reference = new ReferenceCore({ calendar: new BusinessCalendar(['SATURDAY', 'SUNDAY'], [], '2026-03-02'), clock } as unknown as ReferenceCoreOptions);
  const inner = new Proxy({}, { get: () => async (): Promise<CoreOutcome<unknown>> => ({ status: 'Executed', result: undefined }) }) as CoreBankingPort;
  const scenario = scenarioCore(inner, { name: 'core-unavailable' } as Parameters<typeof scenarioCore>[1], clock);
  for (const operation of operations) {
    for (const method of [operation.port.execute, operation.port.lookup]) {
      assert.equal(typeof adapter[method], 'function', `HttpCore.${method}`);
      assert.equal(typeof reference[method], 'function', `ReferenceCore.${method}`);
      assert.equal(typeof scenario[method], 'function', `scenarioCore().${method}`);
    }
  }
  assert.deepEqual(faultedWrites, new Set(operations.map((operation) => operation.port.execute)));
  assert.deepEqual(faultedSettling, new Set(['fenceOperation', ...operations.map((operation) => operation.port.lookup)]));
  void adapter.close();
});

test('the docs page has each operation\'s tag, request example and 200 and 202 examples (src/docs-page)', () => {
  const tags = apiTags.map((tag) => tag.name);
  for (const operation of operations) {
    assert.ok(tags.includes(operation.tag.name), `${operation.name}: its tag`);
    assert.notEqual(requestExample(operation.name, '2026-03-02'), undefined, `${operation.name}: its request example`);
    const successes = successExamples('2026-03-02')[operation.name];
    assert.ok(successes?.[200] !== undefined && successes[202] !== undefined, `${operation.name}: its 200 and 202 examples`);
  }
});

test('the SDK has each operation\'s calls (its folder\'s sdk.ts) on the client and on a session, and knows its 202 body', async () => {
  const client = new CoregateClient({ baseUrl: 'http://127.0.0.1:9', realm: 'sandbox', clientId: 'x', clientSecret: 'y' });
  const clientSource = readFileSync(join(repoRoot, 'src/sdk/client.ts'), 'utf8');
  for (const operation of operations) {
    const folder = await folderOf(operation.name);
    const sdk = (await import(repoModuleUrl(join(folder, 'sdk.js')))) as Record<string, unknown> & { pending: { operation: string } };
    assert.equal(sdk.pending.operation, operation.name, `${folder}/sdk.ts: its pending body is the operation's`);
    const calls = Object.entries(sdk).filter(([name, value]) => typeof value === 'function' && name.endsWith('Calls'));
    assert.equal(calls.length, 1, `${folder}/sdk.ts exports its calls`);
    const [callsName] = calls[0] ?? [''];
    assert.ok(clientSource.includes(`${callsName}(`), `src/sdk/client.ts makes its sessions' group of ${callsName}`);
  }
  const session = client.session({});
  for (const group of [session.termDeposits, session.merchandisingLoans]) for (const call of Object.values(group)) assert.equal(typeof call, 'function');
});

/**
 * The words that name an operation: its name, its port methods, its route's path and its
 * protocol path. Outside its folder they are written only where each place says why.
 */
const namingAllowed = new Map([
  // The port is the contract a bank's core implements: its methods are written out for the bank to read.
  ['src/core/port.ts', 'the port'],
  // The conformance kit's rules exercise each operation of a bank's core by name: tests of a core, not lists.
  ['src/conformance/', 'the conformance kit'],
  // The core's migrations are history: they never change.
  ['src/reference-core/storage/migrations/', 'the core\'s migrations'],
  // A refusal's message as the API has always answered it: it names the paths a scenario applies to.
  ['src/api/scenario-header.ts', 'a refusal\'s message'],
  // Examples in descriptions of the error record's path and of the request log's filter.
  ['src/operations/schemas/common.ts', 'an example in a description'],
  ['src/sandbox/request-log.ts', 'an example in a message'],
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('nothing outside an operation\'s folder names it, where a list of operations would be kept by hand: only the places that say why (the port, the conformance kit, ...)', async () => {
  const folders = new Set(await Promise.all(operations.map((operation) => folderOf(operation.name))));
  const wires = await partsOf('wire');
  const words = operations.flatMap((operation) => {
    const wire = wires.find((entry) => entry.operation === operation)?.part.wire.path ?? '';
    return [operation.name, operation.port.execute, operation.port.lookup, operation.route.path.split('/:')[0] ?? '', wire.split('/:')[0] ?? ''].map((word) => ({ word, operation: operation.name }));
  });
  const hits: Array<{ file: string; text: string }> = [];
  for (const file of sourceFiles('src')) {
    if ([...folders].some((folder) => file.startsWith(`${folder}/`))) continue;
    readFileSync(join(repoRoot, file), 'utf8')
      .split('\n')
      .forEach((line, index) => {
        // A comment may say what a module is about; code is what keeps a list.
        if (/^\s*(?:\/\/|\/\*|\*)/.test(line)) return;
        for (const { word, operation } of words) if (line.includes(word)) hits.push({ file, text: `${relative('.', file)}:${index + 1} names ${operation} (${word})` });
      });
  }
  const allowed = (file: string) => [...namingAllowed.keys()].some((place) => file === place || (place.endsWith('/') && file.startsWith(place)));
  assert.ok(hits.some(({ file }) => file === 'src/core/port.ts'), 'the search finds the port\'s methods (it reads what it should)');
  const found = hits.filter(({ file }) => !allowed(file)).map(({ text }) => text);
  assert.deepEqual(found, [], `derive these from src/operations/registry.ts, or say in namingAllowed why they name an operation:\n${found.join('\n')}`);
});
