/**
 * Fastify's schema compilers, shared by every server this process builds (the API, the core
 * server): a route's validator and its response serializer are compiled once per distinct schema
 * and reused, rather than compiled again by each new instance.
 *
 * Why: compiling the routes' schemas (Ajv for the requests, fast-json-stringify for the answers)
 * was ~0.4 s of CPU per server start, more than half of a start once the modules are loaded. A
 * deployment starts one server per process and does not notice; a process that starts many (the
 * test suite starts hundreds) paid it every time. The compiled functions are pure: the same schema,
 * with the same shared schemas and options, compiles to the same function, so sharing them changes
 * no answer. The cache is keyed by the schema's JSON text, so it holds one entry per distinct
 * schema however many servers are built (a route's schema objects are built anew per registration).
 *
 * They are fastify's own compilers (@fastify/ajv-compiler, @fastify/fast-json-stringify-compiler),
 * with one difference that comes with any custom compiler: fastify no longer lowercases a route's
 * header schema, so a header property that is not in lowercase is refused here, at start-up (a
 * request's header names always arrive in lowercase, and such a property would never match).
 */
import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type Factories = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type ValidatorFactory = NonNullable<Factories['buildValidator']>;
type SerializerFactory = NonNullable<Factories['buildSerializer']>;

const ajvPool = AjvCompiler();
const serializerSelector = SerializerSelector();
const validators = new Map<string, unknown>();
const serializers = new Map<string, unknown>();

/** The function cached under `key`, or the one `compile` makes, cached for the next server. */
function cached<T>(cache: Map<string, unknown>, key: string, compile: () => T): T {
  if (!cache.has(key)) cache.set(key, compile());
  return cache.get(key) as T;
}

/** What a compiled function depends on besides its schema: the shared schemas and the options. */
const poolKeyOf = (externalSchemas: unknown, options: unknown) => `${JSON.stringify(externalSchemas)}\u0000${JSON.stringify(options)}`;

const buildValidator: ValidatorFactory = (externalSchemas, options) => {
  const compile = ajvPool(externalSchemas, options);
  const poolKey = poolKeyOf(externalSchemas, options);
  return (route) => {
    if (route.httpPart === 'headers') refuseUppercaseHeaders(route.schema, `${route.method} ${route.url}`);
    return cached(validators, `${poolKey}\u0000${route.httpPart}\u0000${JSON.stringify(route.schema)}`, () => compile(route));
  };
};

const buildSerializer: SerializerFactory = (externalSchemas, options) => {
  const compile = serializerSelector(externalSchemas as never, options as never);
  const poolKey = poolKeyOf(externalSchemas, options);
  return (route) => cached(serializers, `${poolKey}\u0000${JSON.stringify(route.schema)}`, () => compile(route as never));
};

/** The `schemaController` option of a coregate server: compilers shared by the process's servers. */
export const sharedSchemaController = { compilersFactory: { buildValidator, buildSerializer } } satisfies FastifyServerOptions['schemaController'];

function refuseUppercaseHeaders(schema: unknown, route: string): void {
  const properties = (schema as { properties?: Record<string, unknown> } | null)?.properties ?? {};
  const named = Object.keys(properties).find((name) => name !== name.toLowerCase());
  if (named !== undefined) throw new Error(`${route}: the header schema names "${named}"; header names are matched in lowercase`);
}
