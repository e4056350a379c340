/**
 * The OpenAPI document at /openapi.json and the merchandising loan operation (docs/loans.md;
 * docs/api.md, "200, 202, 204"; docs/errors.md): a valid document (swagger-parser) that documents
 * executeMerchandisingLoanPayment with the operation's fields, the two-item accountReferences,
 * every status and the wrapped error record; and every answer the loan operation really sends,
 * including GET /v1/operations/{reference}, validates against the schema documented for its status
 * (ajv 2020 + ajv-formats, $refs resolved against components.schemas). Real HTTP, real tokens, on
 * each store.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { FaultyCore } from '../helpers/faulty-core.js';
import { componentBase, fetchDocument, operationsTemplate, rewriteRefs, type Json, call, type Observed } from '../helpers/openapi.js';
import { demo, demoToken, type TestServer } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { runPendingWorkers } from '../helpers/background.js';
import { FakeClock } from '../helpers/fake-clock.js';

const executeTemplate = '/v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute';
const facility = '7000000001';
const payer = '1000000001';
/** The demo data has no other funded USD account of C0001: 1 500.00 covers dozens of charges. */
const expense = '1000000002';
const testTimeoutMs = 60_000;
const loanStatuses = ['200', '202', '204', '400', '401', '403', '404', '409', '422', '502', '504'];

function executePath(loanId: string, sequence: number | string): string {
  return `/v1/merchandising-loan/${loanId}/repayment-schedules/${sequence}/execute`;
}

function loanBody(overrides: { amount?: number | null; parameterType?: string; sequence?: number; accounts?: Array<[string, string]> } = {}): Record<string, unknown> {
  const reference: Record<string, unknown> = {};
  if (overrides.sequence !== undefined) reference.loanInstallmentSequence = overrides.sequence;
  if (overrides.amount !== null) reference.loanAmount = { amountValue: overrides.amount ?? 100, amountCurrency: { currencyCode: 'USD' } };
  const accounts = overrides.accounts ?? [
    ['PaymentAccount', payer],
    ['ExpenseAccount', expense],
  ];
  return {
    merchandisingLoanFacilityParameterType: overrides.parameterType ?? 'DocumentaryRemittance',
    merchandisingLoanType: 'CRDE',
    merchandisingLoanFacilityReference: reference,
    accountReferences: accounts.map(([role, identifierValue]) => ({ accountIdentification: { accountIdentificationType: role, identifierValue } })),
  };
}


/** Follows a `#/components/schemas/X` reference (one level). */
function deref(doc: Json, schema: Json): Json {
  const ref: unknown = schema?.$ref;
  if (typeof ref !== 'string') return schema;
  assert.match(ref, /^#\/components\/schemas\/[^/]+$/);
  const target = doc.components?.schemas?.[ref.slice('#/components/schemas/'.length)];
  assert.ok(target, `${ref} resolves`);
  return target;
}

/** The documented response schemas, compiled with ajv 2020 + formats, checked per path, method and status. */
class ResponseSchemas {
  readonly #doc: Json;
  readonly #ajv: InstanceType<typeof Ajv2020.default>;
  readonly #compiled = new Map<string, ReturnType<InstanceType<typeof Ajv2020.default>['compile']>>();

  constructor(doc: Json) {
    this.#doc = doc;
    this.#ajv = new Ajv2020.default({ allErrors: true, strict: true });
    addFormats.default(this.#ajv);
    for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) this.#ajv.addSchema(rewriteRefs(schema), `${componentBase}${name}`);
  }

  /** Validates data against a component schema by name. */
  component(name: string, data: unknown, where: string): void {
    const validate = this.#ajv.getSchema(`${componentBase}${name}`);
    assert.ok(validate, `component ${name} exists`);
    if (!validate(data)) assert.fail(`${where}: ${this.#ajv.errorsText(validate.errors)}\n${JSON.stringify(data)}`);
  }

  /** Asserts that the route documents the status and that the answer matches it. */
  check(template: string, method: 'get' | 'post', observed: Observed): void {
    const where = `${method.toUpperCase()} ${template} → ${observed.status}`;
    const operation = this.#doc.paths?.[template]?.[method];
    assert.ok(operation, `${method.toUpperCase()} ${template} is documented`);
    const declared = operation.responses?.[String(observed.status)];
    assert.ok(declared, `${where} is not documented (documented: ${Object.keys(operation.responses ?? {}).join(', ')})`);
    const content = declared.content?.['application/json'];
    if (!content) {
      assert.equal(observed.text, '', `${where} documents no body and must send none`);
      return;
    }
    assert.ok(content.schema, `${where} documents a schema`);
    assert.match(observed.contentType ?? '', /^application\/json/, `${where} answered ${observed.contentType}`);
    const key = `${method} ${template} ${observed.status}`;
    let validate = this.#compiled.get(key);
    if (!validate) {
      validate = this.#ajv.compile(rewriteRefs(content.schema));
      this.#compiled.set(key, validate);
    }
    if (!validate(observed.body)) assert.fail(`${where}: ${this.#ajv.errorsText(validate.errors)}\n${JSON.stringify(observed.body)}`);
  }
}

describeEachStore('OpenAPI document: the merchandising loan operation', ({ server }) => {
  test('GET /openapi.json is an OpenAPI 3.1 document that swagger-parser validates, with the loan path', async () => {
    const doc = await fetchDocument(server());
    assert.match(String(doc.openapi), /^3\.1\.\d+$/);
    const validated = (await SwaggerParser.validate(structuredClone(doc))) as Json;
    assert.ok(validated.paths[executeTemplate]?.post, 'the validated document keeps the loan operation');
  });

  test('POST /v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute is documented as executeMerchandisingLoanPayment, scope merchandisingLoan:execute, both path parameters required', async () => {
    const doc = await fetchDocument(server());
    const operation = doc.paths?.[executeTemplate]?.post;
    assert.ok(operation, 'the loan operation is documented');
    assert.equal(operation.operationId, 'executeMerchandisingLoanPayment');
    assert.deepEqual(operation.security, [{ oauth2: ['merchandisingLoan:execute'] }, { bearer: ['merchandisingLoan:execute'] }, { dpop: ['merchandisingLoan:execute'] }]);
    const pathParameters = (operation.parameters ?? []).filter((parameter: Json) => parameter.in === 'path');
    assert.deepEqual(pathParameters.map((parameter: Json) => parameter.name).sort(), ['installmentSequence', 'merchandisingLoanId']);
    for (const parameter of pathParameters) assert.equal(parameter.required, true, `${parameter.name} is required`);
    const sequence = pathParameters.find((parameter: Json) => parameter.name === 'installmentSequence');
    assert.ok(!new RegExp(sequence.schema.pattern).test('0'), 'installmentSequence starts at 1');
    assert.ok(new RegExp(sequence.schema.pattern).test('1'));
    const headers = (operation.parameters ?? []).filter((parameter: Json) => parameter.in === 'header').map((parameter: Json) => parameter.name);
    assert.ok(headers.includes('x-correlation-id'), 'x-correlation-id is documented');
    assert.ok(headers.includes('prefer'), 'Prefer is documented');
  });

  test('the request schema: the required fields, merchandisingLoanFacilityReference (loanMaturityDate, loanInstallmentSequence, loanAmount with currencyCode), accountReferences minItems 2 / maxItems 2', async () => {
    const doc = await fetchDocument(server());
    const operation = doc.paths[executeTemplate].post;
    assert.equal(operation.requestBody?.required, true);
    const body = deref(doc, operation.requestBody.content?.['application/json']?.schema);
    assert.equal(body.type, 'object');
    assert.deepEqual(
      [...body.required].sort(),
      ['accountReferences', 'merchandisingLoanFacilityParameterType', 'merchandisingLoanFacilityReference', 'merchandisingLoanType'],
    );
    const reference = deref(doc, body.properties.merchandisingLoanFacilityReference);
    assert.equal(reference.type, 'object');
    assert.deepEqual(Object.keys(reference.properties).sort(), ['loanAmount', 'loanInstallmentSequence', 'loanMaturityDate']);
    assert.ok(!(reference.required ?? []).length, 'none of the reference\'s fields is required');
    assert.equal(reference.properties.loanInstallmentSequence.type, 'integer');
    assert.equal(reference.properties.loanInstallmentSequence.minimum, 1);
    const maturity = deref(doc, reference.properties.loanMaturityDate);
    assert.equal(maturity.properties.dateContent.format, 'date');
    assert.ok(maturity.properties.dateType);
    const amount = deref(doc, reference.properties.loanAmount);
    assert.ok(['number', 'integer'].includes(amount.properties.amountValue.type));
    assert.ok(amount.properties.amountCurrency.properties.currencyCode, 'currencyCode (the loan spelling)');
    assert.equal(amount.properties.amountCurrency.properties.currencycode, undefined, 'not the term deposit spelling');
    const accounts = body.properties.accountReferences;
    assert.equal(accounts.type, 'array');
    assert.equal(accounts.minItems, 2);
    assert.equal(accounts.maxItems, 2);
    const identification = deref(doc, deref(doc, accounts.items).properties.accountIdentification);
    for (const field of ['accountIdentificationType', 'accountDescription', 'identifierValue']) assert.ok(identification.properties[field], `AccountIdentification.${field}`);
    assert.deepEqual([...identification.required].sort(), ['accountIdentificationType', 'identifierValue']);
  });

  test('responses 200, 202, 204, 400, 401, 403, 404, 409, 422, 502, 504: the documented 200 and 202 bodies, 204 without content, the errors as the wrapped record', async () => {
    const doc = await fetchDocument(server());
    const responses = doc.paths[executeTemplate].post.responses;
    for (const status of loanStatuses) assert.ok(responses[status], `${status} is documented`);

    const ok = deref(doc, responses['200'].content['application/json'].schema);
    assert.deepEqual([...ok.required].sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus', 'merchandisingLoanOperationId']);
    assert.equal(ok.properties.executionReference.format, 'uuid');
    assert.equal(ok.properties.executionDateTime.format, 'date-time');
    const status = deref(doc, ok.properties.merchandisingLoanFacilityStatus);
    const values = (status.enum ?? (status.anyOf ?? status.oneOf ?? []).flatMap((branch: Json) => branch.enum ?? [branch.const])).sort();
    assert.deepEqual(values, ['Executed', 'PartiallyExecuted', 'Pending', 'Rejected']);

    const accepted = deref(doc, responses['202'].content['application/json'].schema);
    assert.deepEqual([...accepted.required].sort(), ['executionDateTime', 'executionReference', 'merchandisingLoanFacilityStatus']);
    const pending = accepted.properties.merchandisingLoanFacilityStatus;
    assert.deepEqual(pending.enum ?? [pending.const], ['Pending']);

    assert.equal(responses['204'].content, undefined, '204 has no content');

    for (const code of loanStatuses.filter((s) => Number(s) >= 400)) {
      const wrapped = deref(doc, responses[code].content?.['application/json']?.schema);
      assert.deepEqual(wrapped.required, ['error'], `${code}: the record is wrapped in {"error": ...}`);
      const record = deref(doc, wrapped.properties.error);
      assert.deepEqual([...record.required].sort(), ['message', 'path', 'reason', 'status'], `${code}: the error record`);
      assert.equal(record.properties.status.type, 'integer');
      const detail = deref(doc, record.properties.errordetail.items);
      assert.deepEqual([...detail.required].sort(), ['code', 'message', 'reason']);
    }
  });

  test('the response check bites: an undocumented status, an unwrapped error, a bad 200 or 202 body, a 204 with a body all fail', async () => {
    const schemas = new ResponseSchemas(await fetchDocument(server()));
    const headers = new Headers();
    const json = 'application/json; charset=utf-8';
    const record = { status: 422, reason: 'BUSINESS_RULE_VIOLATION', message: 'm', path: `POST ${executePath(facility, 1)}` };
    const observed = (status: number, body: Json, contentType: string | null = json): Observed => ({ status, contentType, headers, text: body === undefined ? '' : JSON.stringify(body), body });
    schemas.check(executeTemplate, 'post', observed(422, { error: record }));
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(418, { error: record })), /not documented/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(422, record)), /error/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(422, { error: { ...record, path: undefined } })), /path/);
    const ok = { merchandisingLoanOperationId: 'MLO000000000000001', merchandisingLoanFacilityStatus: 'Executed', executionReference: randomUUID(), executionDateTime: new Date().toISOString() };
    schemas.check(executeTemplate, 'post', observed(200, ok));
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(200, { ...ok, merchandisingLoanFacilityStatus: 'Done' })), /merchandisingLoanFacilityStatus|anyOf|enum/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(200, { ...ok, executionReference: 'not-a-uuid' })), /uuid/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(200, { ...ok, executionDateTime: '2026-13-45' })), /date-time/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(202, { ...ok, merchandisingLoanFacilityStatus: 'Executed' })), /merchandisingLoanFacilityStatus|equal|enum/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(204, ok)), /no body/);
    assert.throws(() => schemas.check(executeTemplate, 'post', observed(200, ok, 'text/plain')), /text\/plain/);
  });

  test('every answer of the loan operation matches the schema documented for its status (200, 202, 204, 400, 401, 403, 404, 409, 413, 415, 422) and GET /v1/operations/{ref} 200 (Executed and Rejected) carries a documented body', { timeout: testTimeoutMs }, async () => {
    const doc = await fetchDocument(server());
    const schemas = new ResponseSchemas(doc);
    const treasury = await demoToken(server());
    const branch = await demoToken(server(), demo.branch);
    const seen = new Set<number>();
    const post = async (
      path: string,
      options: { token?: string; body?: unknown; raw?: string; contentType?: string; prefer?: string; correlationId?: string },
      expected: number,
      code?: string,
    ): Promise<Observed> => {
      const headers: Record<string, string> = { 'x-correlation-id': options.correlationId ?? `openapi-ml-${randomUUID()}` };
      if (options.prefer) headers.prefer = options.prefer;
      const request: Parameters<typeof call>[3] = { headers, body: options.raw ?? JSON.stringify(options.body ?? loanBody()) };
      if (options.token !== undefined) request.token = options.token;
      if (options.contentType !== undefined) request.contentType = options.contentType;
      const observed = await call(server(), 'POST', path, request);
      assert.equal(observed.status, expected, observed.text);
      schemas.check(executeTemplate, 'post', observed);
      if (code !== undefined) assert.equal(observed.body.error.errordetail?.[0]?.code, code);
      seen.add(observed.status);
      return observed;
    };
    const at = (sequence: number | string, loanId = facility) => executePath(loanId, sequence);

    const executed = await post(at(1), { token: treasury, body: loanBody({ amount: 100 }) }, 200);
    assert.equal(executed.body.merchandisingLoanFacilityStatus, 'PartiallyExecuted');
    const whole = await post(at(2), { token: treasury, body: loanBody({ amount: null }) }, 200);
    assert.equal(whole.body.merchandisingLoanFacilityStatus, 'Executed');
    const minimal = await post(at(1), { token: treasury, prefer: 'return=minimal', body: loanBody({ amount: 200 }) }, 204);
    assert.equal(minimal.text, '');
    const accepted = await post(at(1), { token: treasury, prefer: 'respond-async', body: loanBody({ amount: 300 }) }, 202);
    const acceptedRefused = await post(at(1), { token: treasury, prefer: 'respond-async', body: loanBody({ amount: 25_000 }) }, 202);

    await post(at(1), { token: treasury, raw: '{"merchandisingLoanType": ' }, 400, 'ML-400-001');
    await post(at(1), { token: treasury, body: loanBody({ accounts: [['PaymentAccount', payer]] }) }, 400, 'ML-400-003');
    await post(at(1), { token: treasury, body: loanBody({ accounts: [['PaymentAccount', payer], ['PaymentAccount', expense]] }) }, 400, 'ML-400-010');
    await post(at(1), { token: treasury, body: loanBody({ sequence: 2 }) }, 400, 'ML-400-011');
    await post(at('abc'), { token: treasury }, 400, 'ML-400-003');
    await post(at(1), { token: treasury, body: loanBody({ amount: 0 }) }, 400, 'ML-400-005');
    await post(at(1), {}, 401, 'ML-401-001');
    await post(at(1), { token: 'not-a-jwt' }, 401, 'ML-401-002');
    await post(at(1), { token: branch }, 403, 'ML-403-001');
    await post(at(1, '7999999999'), { token: treasury }, 404, 'ML-404-001');
    await post(at(9), { token: treasury }, 404, 'ML-404-002');
    await post(at(2), { token: treasury }, 409, 'ML-409-010');
    const correlationId = `openapi-ml-repeat-${randomUUID()}`;
    await post(at(3), { token: treasury, correlationId, body: loanBody({ amount: 400 }) }, 200);
    await post(at(3), { token: treasury, correlationId, body: loanBody({ amount: 400 }) }, 409, 'ML-409-001');
    await post(at(1), { token: treasury, body: { ...loanBody(), padding: 'x'.repeat(70 * 1024) } }, 413, 'ML-413-001');
    await post(at(1), { token: treasury, contentType: 'text/plain' }, 415, 'ML-415-001');
    await post(at(1), { token: treasury, body: loanBody({ parameterType: 'LetterOfCredit' }) }, 422, 'ML-422-003');
    await post(at(1), { token: treasury, body: loanBody({ amount: 25_000 }) }, 422, 'ML-422-005');
    assert.deepEqual([...seen].sort((a, b) => a - b), [200, 202, 204, 400, 401, 403, 404, 409, 413, 415, 422]);

    const operation = async (reference: string, expectedStatus: 'Executed' | 'Rejected' | undefined): Promise<Observed> => {
      // The 202s' executions: the pending workers' passes (started by the 202s) have ended.
      if (expectedStatus !== undefined) await runPendingWorkers(server());
      const observed = await call(server(), 'GET', operationsTemplate.replace('{reference}', reference), { token: treasury });
      assert.equal(observed.status, 200, observed.text);
      schemas.check(operationsTemplate, 'get', observed);
      if (expectedStatus !== undefined) assert.equal(observed.body.status, expectedStatus);
      return observed;
    };
    const sync = await operation(executed.body.executionReference, 'Executed');
    assert.deepEqual(sync.body.result, executed.body, 'the operation\'s result is its 200 body');
    schemas.component('MerchandisingLoanExecutionResponse', sync.body.result, 'GET /v1/operations result');
    const async = await operation(accepted.body.executionReference, 'Executed');
    schemas.component('MerchandisingLoanExecutionResponse', async.body.result, 'GET /v1/operations result of a 202');
    assert.equal(async.body.result.executionReference, accepted.body.executionReference);
    const rejected = await operation(acceptedRefused.body.executionReference, 'Rejected');
    schemas.component('ErrorRecord', rejected.body.error, 'GET /v1/operations error of a rejected 202');
    assert.equal(rejected.body.error.errordetail?.[0]?.code, 'ML-422-005');
    assert.equal(rejected.body.result.merchandisingLoanFacilityStatus, 'Rejected');
    schemas.component('MerchandisingLoanFacilityStatus', rejected.body.result.merchandisingLoanFacilityStatus, 'the rejected result\'s status');
  });
});

const faulty = new FaultyCore();
const faultCoreTimeoutMs = 300;
const faultClock = new FakeClock(Date.now());

describeEachStore(
  'OpenAPI document: the loan operation\'s 502 and 504',
  ({ server }) => {
    test('502 (core unavailable) and 504 (core timed out) answers match the documented wrapped error record', { timeout: testTimeoutMs }, async () => {
      const schemas = new ResponseSchemas(await fetchDocument(server()));
      const treasury = await demoToken(server());
      const cases: Array<{ fault: FaultyCore['fault']; status: number; code: string }> = [
        { fault: { kind: 'unavailable' }, status: 502, code: 'ML-502-001' },
        // Held, the time-out passed on the instance's clock (504), then the held call fails.
        { fault: { kind: 'hold-then-fail' }, status: 504, code: 'ML-504-001' },
      ];
      for (const { fault, status, code } of cases) {
        faulty.fault = fault;
        let observed: Observed;
        try {
          const arrived = fault.kind === 'hold-then-fail' ? faulty.arrived() : undefined;
          const answer = call(server(), 'POST', executePath(facility, 1), {
            token: treasury,
            body: JSON.stringify(loanBody({ amount: 100 })),
            headers: { 'x-correlation-id': `openapi-ml-fault-${randomUUID()}` },
          });
          if (arrived) {
            await arrived;
            faultClock.advance(faultCoreTimeoutMs);
          }
          observed = await answer;
        } finally {
          faulty.fault = { kind: 'none' };
          faulty.release();
        }
        assert.equal(observed.status, status, observed.text);
        schemas.check(executeTemplate, 'post', observed);
        assert.equal(observed.body.error.errordetail?.[0]?.code, code);
      }
      // The held work rolls back before the server closes.
      await server().coregate.background.execution.idle();
    });
  },
  { wrapCore: faulty.wrap, clock: faultClock, flags: { coreTimeoutMs: String(faultCoreTimeoutMs) } },
);
