/**
 * The OpenAPI document at /openapi.json (docs/api.md, "The docs page"): a valid OpenAPI 3.1 document
 * that documents the business API's routes with their spellings and statuses, and the answers the
 * server really sends: every received body validates against the schema the document declares
 * for its path, method and status, and a status the document does not declare fails the test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath } from '../helpers/http.js';
import { componentBase, fetchDocument, operationsTemplate, rewriteRefs, type Json, call, type Observed } from '../helpers/openapi.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';

const testTimeoutMs = 60_000;
const retrieveTemplates = ['/v1/term-deposits/{termDepositId}/retrieve', '/v1/term-deposit/{termDepositId}/retrieve'];

function initiationBody(overrides: { customerReference?: string; sourceAccount?: string; amountValue?: number } = {}): Record<string, unknown> {
  return { ...depositBody(overrides.amountValue ?? 1000, overrides.sourceAccount), customerReference: overrides.customerReference ?? 'C0001' };
}

/** The declared response schemas of a document, compiled once, looked up by path, method and status. */
class ResponseSchemas {
  readonly #doc: Json;
  readonly #ajv: InstanceType<typeof Ajv2020.default>;
  readonly #compiled = new Map<string, (data: unknown) => boolean>();

  constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020.default({ allErrors: true, strict: true });
    addFormats.default(this.#ajv);
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) {
      this.#ajv.addSchema(rewriteRefs(schema), `${componentBase}${name}`);
    }
  }

  /** Asserts that the route documents the status, and that the body and content type match it. */
  check(template: string, method: string, observed: Observed): void {
    const where = `${method.toUpperCase()} ${template} → ${observed.status}`;
    const operation = this.#doc.paths?.[template]?.[method];
    assert.ok(operation, `${method.toUpperCase()} ${template} is documented`);
    const declared = operation.responses?.[String(observed.status)];
    assert.ok(declared, `${where} is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`);
    const content = declared.content?.['application/json'];
    assert.ok(content?.schema, `${where} documents an application/json body`);
    assert.match(observed.contentType ?? '', /^application\/json/, `${where} answered ${observed.contentType}`);
    const key = `${method} ${template} ${observed.status}`;
    let validate = this.#compiled.get(key);
    if (!validate) {
      const compiled = this.#ajv.compile(rewriteRefs(content.schema));
      validate = (data: unknown) => {
        const ok = compiled(data);
        if (!ok) assert.fail(`${where}: ${this.#ajv.errorsText(compiled.errors)}\n${JSON.stringify(data)}`);
        return ok;
      };
      this.#compiled.set(key, validate);
    }
    assert.ok(validate(observed.body), where);
  }
}


function resolveRef(doc: Json, schema: Json): Json {
  const ref: unknown = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const target = doc.components?.schemas?.[name];
  assert.ok(target, `${ref} resolves`);
  return target;
}

describeEachStore('OpenAPI document', ({ server }) => {
  test('GET /openapi.json is an OpenAPI 3.1 document that swagger-parser validates', async () => {
    const doc = await fetchDocument(server());
    assert.match(String(doc.openapi), /^3\.1\.\d+$/);
    const validated = (await SwaggerParser.validate(structuredClone(doc))) as Json;
    assert.equal(validated.openapi, doc.openapi);
    assert.equal(typeof doc.info?.title, 'string');
    assert.equal(typeof doc.info?.version, 'string');
  });

  test('POST /v1/term-deposits/initiate is documented: bearer scope termDeposit:initiate, a request body with currencycode, and responses 200, 202, 400, 401, 403, 404, 409, 422, 502, 504', async () => {
    const doc = await fetchDocument(server());
    const operation = doc.paths?.[initiatePath]?.post;
    assert.ok(operation, 'POST /v1/term-deposits/initiate is documented');
    assert.deepEqual(operation.security, [{ oauth2: ['termDeposit:initiate'] }, { bearer: ['termDeposit:initiate'] }, { dpop: ['termDeposit:initiate'] }]);
    // The DPoP scheme (RFC 9449's HTTP authentication scheme) beside Bearer (docs/auth.md, "DPoP at
    // the API").
    const dpop = (doc.components?.securitySchemes as Record<string, { type?: string; scheme?: string; description?: string }> | undefined)?.dpop;
    assert.deepEqual([dpop?.type, dpop?.scheme], ['http', 'DPoP']);
    assert.match(dpop?.description ?? '', /Authorization: DPoP <token>/);
    const body = resolveRef(doc, operation.requestBody?.content?.['application/json']?.schema);
    assert.equal(body?.type, 'object');
    for (const field of ['customerReference', 'termDepositProduct', 'principalAmount', 'interestRate', 'valueDate', 'sourceAccount', 'interestSettlementAccount']) {
      assert.ok(body.required?.includes(field), `${field} is required`);
    }
    const amountCurrency = body.properties?.principalAmount?.properties?.amountCurrency;
    assert.ok(amountCurrency?.properties?.currencycode, 'principalAmount.amountCurrency.currencycode (the term deposit\'s lower-case spelling)');
    assert.equal(amountCurrency.properties.currencyCode, undefined, 'not the loan operation\'s currencyCode');
    assert.deepEqual(amountCurrency.required, ['currencycode']);
    assert.ok(body.properties?.termDepositPeriod?.properties?.numberOfDays);
    assert.ok(body.properties?.termDepositPeriod?.properties?.maturityDate);
    for (const status of ['200', '202', '400', '401', '403', '404', '409', '422', '502', '504']) {
      assert.ok(operation.responses?.[status], `${status} is documented`);
      assert.ok(operation.responses[status].content?.['application/json']?.schema, `${status} documents a JSON body`);
    }
    const ok = resolveRef(doc, operation.responses['200'].content['application/json'].schema);
    for (const field of ['termDepositAccount', 'customerReference', 'termDepositProduct', 'principalAmount', 'termDepositPeriod', 'valueDate', 'sourceAccount', 'interestSettlementAccount', 'transactionDescription', 'operationReference']) {
      assert.ok(ok.properties?.[field], `200 documents ${field}`);
    }
    assert.ok(ok.properties.principalAmount.properties?.amountCurrency?.properties?.currencycode);
    const accepted = resolveRef(doc, operation.responses['202'].content['application/json'].schema);
    assert.ok(accepted.properties?.operationReference);
    assert.ok(accepted.properties?.termDepositStatus);
    const error = resolveRef(doc, operation.responses['422'].content['application/json'].schema);
    assert.deepEqual([...(error.required ?? [])].sort(), ['message', 'path', 'reason', 'status']);
    assert.ok(error.properties?.errordetail);
  });

  test('both retrieve spellings and GET /v1/operations/{reference} are documented with a 200 body', async () => {
    const doc = await fetchDocument(server());
    for (const template of retrieveTemplates) {
      const operation = doc.paths?.[template]?.get;
      assert.ok(operation, `GET ${template} is documented`);
      assert.deepEqual(operation.security, [{ oauth2: ['termDeposit:retrieve'] }, { bearer: ['termDeposit:retrieve'] }, { dpop: ['termDeposit:retrieve'] }]);
      assert.ok(operation.parameters?.some((parameter: Json) => parameter.in === 'path' && parameter.name === 'termDepositId' && parameter.required === true));
      const ok = resolveRef(doc, operation.responses?.['200']?.content?.['application/json']?.schema);
      for (const field of ['termDepositAccount', 'termDepositStatus', 'expectedInterestAmount', 'operationReference']) assert.ok(ok?.properties?.[field], `${template} 200 documents ${field}`);
    }
    const operations = doc.paths?.[operationsTemplate]?.get;
    assert.ok(operations, `GET ${operationsTemplate} is documented`);
    assert.ok(operations.parameters?.some((parameter: Json) => parameter.in === 'path' && parameter.name === 'reference'));
    const view = resolveRef(doc, operations.responses?.['200']?.content?.['application/json']?.schema);
    for (const field of ['reference', 'operation', 'status']) assert.ok(view?.required?.includes(field), `the operation view requires ${field}`);
    assert.ok(operations.responses?.['404'], 'an unknown reference is documented as 404');
  });

  test('/docs serves an HTML page', async () => {
    const response = await fetch(`${server().url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const html = await response.text();
    assert.match(html, /<html/i);
    assert.match(html, /swagger/i);
  });

  test('the response check bites: an undocumented status, a body off its schema or a non-JSON answer fails', async () => {
    const schemas = new ResponseSchemas(await fetchDocument(server()));
    const headers = new Headers();
    const json = 'application/json; charset=utf-8';
    const errorBody = { status: 409, reason: 'CONFLICT', message: 'm', path: `POST ${initiatePath}` };
    schemas.check(initiatePath, 'post', { status: 409, contentType: json, headers, body: errorBody });
    assert.throws(() => schemas.check(initiatePath, 'post', { status: 418, contentType: json, headers, body: errorBody }), /not documented/);
    assert.throws(() => schemas.check(retrieveTemplates[0] ?? '', 'get', { status: 409, contentType: json, headers, body: errorBody }), /not documented/);
    assert.throws(() => schemas.check(initiatePath, 'post', { status: 409, contentType: json, headers, body: { ...errorBody, path: undefined } }), /path/);
    assert.throws(() => schemas.check(initiatePath, 'post', { status: 409, contentType: 'text/plain', headers, body: errorBody }), /text\/plain/);
    assert.throws(() => schemas.check(initiatePath, 'post', { status: 200, contentType: json, headers, body: { termDepositAccount: 5 } }), /termDepositAccount|required/);
    assert.throws(
      () => schemas.check(initiatePath, 'post', { status: 202, contentType: json, headers, body: { operationReference: 'r', termDepositStatus: 'Executed' } }),
      /termDepositStatus|constant|equal/,
    );
  });

  test('every answer of the business API matches the schema documented for its path, method and status (200, 202, 400, 401, 403, 404, 409, 413, 415, 422, retrieve, operations)', { timeout: testTimeoutMs }, async () => {
    const schemas = new ResponseSchemas(await fetchDocument(server()));
    const treasury = await demoToken(server());
    const reporting = await demoToken(server(), demo.reporting);
    const retrieveOnly = await demoToken(server(), demo.treasury, { scope: 'termDeposit:retrieve' });
    const seen = new Map<string, Set<number>>();
    const observe = (template: string, method: 'get' | 'post', observed: Observed): Observed => {
      schemas.check(template, method, observed);
      const key = `${method} ${template}`;
      seen.set(key, (seen.get(key) ?? new Set()).add(observed.status));
      return observed;
    };
    const post = async (options: Parameters<typeof call>[3], expected: number): Promise<Observed> => {
      const observed = observe(initiatePath, 'post', await call(server(), 'POST', initiatePath, options));
      assert.equal(observed.status, expected, JSON.stringify(observed.body));
      return observed;
    };
    const json = (body: unknown) => JSON.stringify(body);
    const correlation = (id: string) => ({ 'x-correlation-id': `openapi-${id}` });

    const created = await post({ token: treasury, body: json(initiationBody()), headers: correlation('200') }, 200);
    const accepted = await post({ token: treasury, body: json(initiationBody({ amountValue: 1500 })), headers: { ...correlation('202'), prefer: 'respond-async' } }, 202);
    assert.equal(accepted.body.termDepositStatus, 'Pending');
    const { customerReference: _omitted, ...noCustomer } = initiationBody();
    await post({ token: treasury, body: json(noCustomer), headers: correlation('400-schema') }, 400);
    await post({ token: treasury, body: '{"customerReference": ', headers: correlation('400-json') }, 400);
    await post({ token: treasury, body: json(initiationBody()), headers: { 'x-correlation-id': 'bad correlation id!' } }, 400);
    await post({ body: json(initiationBody()), headers: correlation('401') }, 401);
    await post({ token: 'not-a-jwt', body: json(initiationBody()), headers: correlation('401-bad') }, 401);
    await post({ token: reporting, body: json(initiationBody()), headers: correlation('403') }, 403);
    await post({ token: treasury, body: json(initiationBody({ customerReference: 'C9999' })), headers: correlation('404') }, 404);
    await post({ token: treasury, body: json(initiationBody()), headers: correlation('200') }, 409);
    await post({ token: treasury, body: json({ ...initiationBody(), padding: 'x'.repeat(70 * 1024) }), headers: correlation('413') }, 413);
    await post({ token: treasury, body: json(initiationBody()), contentType: 'text/plain', headers: correlation('415') }, 415);
    const refused = await post({ token: treasury, body: json(initiationBody({ sourceAccount: '1000000002', amountValue: 2000 })), headers: correlation('422') }, 422);
    assert.equal(refused.body.errordetail?.[0]?.code, 'TD-422-002');

    const contract = created.body.termDepositAccount as string;
    for (const template of retrieveTemplates) {
      const path = template.replace('{termDepositId}', contract);
      const get = async (token: string | undefined, at: string, expected: number) => {
        const observed = observe(template, 'get', await call(server(), 'GET', at, token === undefined ? {} : { token }));
        assert.equal(observed.status, expected, `GET ${at}: ${JSON.stringify(observed.body)}`);
        return observed;
      };
      const found = await get(treasury, path, 200);
      assert.equal(found.body.termDepositAccount, contract);
      await get(undefined, path, 401);
      await get(treasury, template.replace('{termDepositId}', 'TD000000000000000'), 404);
      await get(treasury, template.replace('{termDepositId}', 'X'.repeat(65)), 400);
      // A token narrowed to termDeposit:initiate has no retrieve scope.
      await get(await demoToken(server(), demo.treasury, { scope: 'termDeposit:initiate' }), path, 403);
    }

    const operation = async (reference: string, token: string | undefined, expected: number) => {
      const path = operationsTemplate.replace('{reference}', reference);
      const observed = observe(operationsTemplate, 'get', await call(server(), 'GET', path, token === undefined ? {} : { token }));
      assert.equal(observed.status, expected, `GET ${path}: ${JSON.stringify(observed.body)}`);
      return observed;
    };
    const executed = await operation(created.body.operationReference, treasury, 200);
    assert.equal(executed.body.status, 'Executed');
    assert.deepEqual(executed.body.result, created.body, 'the operation\'s result is its 200 body');
    const pending = await operation(accepted.body.operationReference, treasury, 200);
    assert.ok(['Pending', 'Executed'].includes(pending.body.status));
    await operation(refused.headers.get('x-correlation-id') ?? 'unknown', treasury, 404);
    await operation(created.body.operationReference, reporting, 404);
    await operation(created.body.operationReference, retrieveOnly, 403);
    await operation(created.body.operationReference, undefined, 401);

    const statuses = (key: string) => [...(seen.get(key) ?? [])].sort((a, b) => a - b);
    assert.deepEqual(statuses(`post ${initiatePath}`), [200, 202, 400, 401, 403, 404, 409, 413, 415, 422]);
    for (const template of retrieveTemplates) assert.deepEqual(statuses(`get ${template}`), [200, 400, 401, 403, 404]);
    assert.deepEqual(statuses(`get ${operationsTemplate}`), [200, 401, 403, 404]);
  });
});
