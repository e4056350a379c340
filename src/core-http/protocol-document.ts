/**
 * The remote core protocol's OpenAPI document with every schema named (docs/core-protocol.md):
 * @fastify/swagger writes each route's schemas inline, so the same Refusal or TermDeposit appeared
 * a dozen times without a name, and a bank writing a core in another language had nothing to
 * generate types from. Here every schema that has a `title` in src/core-http/protocol.ts becomes
 * `components.schemas[title]`, and each place that used it a `$ref` to it.
 *
 * Only the document changes: the routes still validate and serialize with the TypeBox schemas as
 * they are (a title is an annotation), so the wire protocol is the same with or without it.
 */
import type { TSchema } from '@sinclair/typebox';
import { isDeepStrictEqual } from 'node:util';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const componentPrefix = '#/components/schemas/';

const isObject = (value: unknown): value is JsonObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The schema as JSON: TypeBox's symbol keys (its Kind) do not survive, the keywords do. */
const plainOf = (schema: TSchema): JsonObject => JSON.parse(JSON.stringify(schema)) as JsonObject;

/**
 * Every titled schema in `roots`, nested ones included, by title. Two different schemas with one
 * title would make one name mean two things: refused here (a test builds the document).
 */
function namedSchemas(roots: readonly TSchema[]): Map<string, JsonObject> {
  const named = new Map<string, JsonObject>();
  const collect = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(collect);
    if (!isObject(node)) return;
    const title = node.title;
    if (typeof title === 'string') {
      const known = named.get(title);
      if (known !== undefined && !isDeepStrictEqual(known, node)) throw new Error(`two different protocol schemas are titled ${title}: give each its own title`);
      named.set(title, node);
    }
    Object.values(node).forEach(collect);
  };
  roots.forEach((root) => collect(plainOf(root)));
  return named;
}

/** `node` with each titled schema inside it (itself too, unless `keepRoot`) replaced by a reference. */
function referring(node: Json, names: ReadonlySet<string>, keepRoot: boolean): Json {
  if (Array.isArray(node)) return node.map((item) => referring(item, names, false));
  if (!isObject(node)) return node;
  if (!keepRoot && typeof node.title === 'string' && names.has(node.title)) return { $ref: `${componentPrefix}${node.title}` };
  return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, referring(value, names, false)]));
}

interface OpenApiDocument {
  components?: { schemas?: Record<string, unknown> } & Record<string, unknown>;
  paths?: unknown;
}

/**
 * The document with `schemas` (the routes' bodies and answers) and every titled schema inside
 * them as named components, in name order, and the paths referring to them.
 */
export function withNamedSchemas<D extends object>(document: D, schemas: readonly TSchema[]): D {
  const named = namedSchemas(schemas);
  const names = new Set(named.keys());
  const components = Object.fromEntries([...named.keys()].sort().map((name) => [name, referring(named.get(name) as JsonObject, names, true)]));
  const openapi = document as OpenApiDocument;
  return {
    ...document,
    components: { ...openapi.components, schemas: { ...openapi.components?.schemas, ...components } },
    paths: referring((openapi.paths ?? {}) as Json, names, false),
  };
}
