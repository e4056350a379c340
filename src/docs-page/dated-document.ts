/**
 * The OpenAPI document as /openapi.json serves it: the routes' document (@fastify/swagger) with an
 * example on every request body and JSON answer (src/docs-page/demo-examples.ts), dated by the
 * core's business date, and the links that carry a created contract's number and an operation's
 * reference to the operations that read them (OpenAPI links; the Postman collection follows them).
 */
import type { Family } from '../core/error-catalogue.js';
import { operations } from '../operations/registry.js';
import { datedSchemaExamples, errorExample, linkExamples, requestExample, successExamples } from './demo-examples.js';

// The document is plain JSON as @fastify/swagger builds it: walked freely here.
export type OpenApiDocument = Record<string, any>;
type Json = any;

export const httpMethods = ['get', 'put', 'post', 'delete', 'patch'] as const;

/** Every operation of a document, in its order: [path template, method, operation object]. */
export function operationsOf(doc: OpenApiDocument): Array<[string, string, Json]> {
  return Object.entries((doc.paths ?? {}) as Record<string, Record<string, Json>>).flatMap(([path, methods]) =>
    httpMethods.filter((method) => methods[method] !== undefined).map((method): [string, string, Json] => [path, method, methods[method]]),
  );
}

/** A component `$ref` followed once (the document's references all point at components). */
export function resolveSchema(doc: OpenApiDocument, schema: Json): Json {
  const ref = schema?.$ref;
  return typeof ref === 'string' ? doc.components?.schemas?.[ref.replace('#/components/schemas/', '')] : schema;
}

/** A path parameter's documented example. */
export function parameterExample(operation: Json, name: string): unknown {
  const parameter = ((operation.parameters ?? []) as Json[]).find((candidate) => candidate.in === 'path' && candidate.name === name);
  return parameter?.example ?? parameter?.schema?.examples?.[0] ?? parameter?.examples?.[0];
}

/** The path with each parameter replaced by its example, as an error record's `path` names it. */
function concretePath(path: string, operation: Json): string {
  return path.replace(/\{([^}]+)\}/g, (whole, name: string) => String(parameterExample(operation, name) ?? whole));
}

/** The path's first segments of each operation's routes (its own and its reads'), with the operation's family. */
const operationResources = operations.flatMap((operation) =>
  [operation.route.path, ...operation.route.readPaths].map((path) => ({ resource: path.split('/').slice(0, 3).join('/'), family: operation.family })),
);

/** The error record's code family of a business path: its operation's, or none (the operation and webhook reads). */
function familyOf(path: string): Family | undefined {
  return operationResources.find(({ resource }) => path === resource || path.startsWith(`${resource}/`))?.family;
}

/**
 * Where a later call finds a value of an earlier answer (OpenAPI 3.1 §4.8.20, Link Object): each
 * operation's (its examples.ts), e.g. the initiation's contract number is the retrieve's path
 * parameter, its reference the operation's.
 */
const links: Record<string, Record<string, Json>> = linkExamples();

/** The request example of a route: an operation's own (dated where the body holds a date the core checks), else its schema's. */
function requestExampleOf(doc: OpenApiDocument, operationId: string, schema: Json, businessDate: string): unknown {
  return requestExample(operationId, businessDate) ?? resolveSchema(doc, schema)?.examples?.[0];
}

/** A copy of the routes' document with every example set for `businessDate`. */
export function withExamples(base: OpenApiDocument, businessDate: string): OpenApiDocument {
  const doc = structuredClone(base);
  const successes = successExamples(businessDate);
  for (const [path, method, operation] of operationsOf(doc)) {
    const id = String(operation.operationId ?? '');
    for (const media of Object.values((operation.requestBody?.content ?? {}) as Record<string, Json>)) {
      const example = requestExampleOf(doc, id, media.schema, businessDate);
      if (example !== undefined) media.example = example;
    }
    for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
      const json = response.content?.['application/json'];
      if (!json) continue;
      const ref = String(json.schema?.$ref ?? '');
      if (ref.endsWith('/ErrorRecord') || ref.endsWith('/WrappedErrorRecord')) {
        json.example = errorExample(Number(status), familyOf(path), `${method.toUpperCase()} ${concretePath(path, operation)}`, ref.endsWith('/WrappedErrorRecord'), businessDate);
      } else if (successes[id]?.[status] !== undefined) {
        json.example = successes[id][status];
      }
      if (status === '200' && links[id]) response.links = links[id];
    }
  }
  // A schema's own example (the "Schemas" section, and Swagger UI's fallback) carries the same date.
  for (const [name, example] of Object.entries(datedSchemaExamples(businessDate))) {
    const schema = doc.components?.schemas?.[name];
    if (schema) schema.examples = [example];
  }
  return doc;
}

/**
 * The served document, built again only when the core's business date moved (it moves forward,
 * once per advance): one date's document is kept. The date is read from the core port on each
 * request; a core that cannot answer leaves the last document in place, so the docs page never
 * fails because the core is down.
 */
export class DatedDocument<Derived> {
  #current: { businessDate: string; document: OpenApiDocument; derived: Derived } | undefined;

  constructor(
    private readonly options: {
      base: () => OpenApiDocument;
      businessDate: () => Promise<string>;
      /** The date used while the core has never answered. */
      fallbackBusinessDate: string;
      /** What else is built from each date's document (the Postman collection). */
      derive: (document: OpenApiDocument) => Derived;
    },
  ) {}

  async current(): Promise<{ businessDate: string; document: OpenApiDocument; derived: Derived }> {
    let businessDate: string;
    try {
      businessDate = await this.options.businessDate();
    } catch {
      businessDate = this.#current?.businessDate ?? this.options.fallbackBusinessDate;
    }
    if (this.#current?.businessDate !== businessDate) {
      const document = withExamples(this.options.base(), businessDate);
      this.#current = { businessDate, document, derived: this.options.derive(document) };
    }
    return this.#current;
  }
}
