/**
 * The served document's examples (/openapi.json, issue 27): every request body and every JSON
 * answer carries one, so that Swagger UI never invents a value from a pattern; each validates
 * against its schema and names the demo data's entities (demo/sandbox.json); the dated ones
 * follow the core's business date, so that "Try it out" still succeeds after an advance.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { componentBase, fetchDocument, rewriteRefs, type Json } from '../helpers/openapi.js';
import { demo, demoToken, repoRoot } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { demoCalendar } from '../../src/docs-page/demo-examples.js';
import { operationsOf } from '../../src/docs-page/dated-document.js';

const demoData = JSON.parse(readFileSync(join(repoRoot, 'demo/sandbox.json'), 'utf8')) as Json;

/** Every example of the document: where it is, the schema it must match, and the value. */
function examplesOf(doc: Json): Array<{ where: string; schema: Json; example: Json }> {
  const found: Array<{ where: string; schema: Json; example: Json }> = [];
  for (const [path, method, operation] of operationsOf(doc)) {
    const name = `${method.toUpperCase()} ${path}`;
    for (const [mediaType, media] of Object.entries((operation.requestBody?.content ?? {}) as Record<string, Json>)) {
      assert.ok(media.example !== undefined, `${name}: the ${mediaType} request body has an example`);
      found.push({ where: `${name} request`, schema: media.schema, example: media.example });
    }
    for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
      const json = response.content?.['application/json'];
      if (!json) continue;
      assert.ok(json.example !== undefined, `${name} → ${status}: the JSON answer has an example`);
      found.push({ where: `${name} → ${status}`, schema: json.schema, example: json.example });
    }
  }
  return found;
}

/** Every [key, value] pair in a JSON value, however deep. */
function* entriesOf(value: Json): Generator<[string, Json, Json]> {
  if (Array.isArray(value)) for (const item of value) yield* entriesOf(item);
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      yield [key, inner, value];
      yield* entriesOf(inner);
    }
  }
}

/** Asserts that the identifiers an example holds are the demo data's. */
function assertDemoEntities(where: string, example: Json): void {
  const accounts = new Set((demoData.accounts as Json[]).map((account) => account.accountNumber));
  const customers = new Set((demoData.customers as Json[]).map((customer) => customer.customerReference));
  const products = new Set((demoData.termDepositProducts as Json[]).map((product) => `${product.productCode}/${product.componentCode}`));
  const currencies = new Set([...(demoData.accounts as Json[]).map((account) => account.currency), ...(demoData.merchandisingLoans as Json[]).map((loan) => loan.currency)]);
  const clients = new Set((demoData.realms as Json[]).flatMap((realm) => (realm.clients as Json[]).map((client) => client.clientId)));
  const [facility] = demoData.merchandisingLoans as Json[];
  for (const [key, value, holder] of entriesOf(example)) {
    const at = `${where}: ${key} ${JSON.stringify(value)}`;
    if (['customerReference'].includes(key)) assert.ok(customers.has(value), at);
    if (key === 'identifierValue' || (key === 'accountIdentification' && typeof value === 'string')) assert.ok(accounts.has(value), at);
    if (key === 'productCode') assert.ok(products.has(`${value}/${holder.componentCode}`), at);
    if (key === 'currencycode' || key === 'currencyCode') assert.ok(currencies.has(value), at);
    if (key === 'client_id' || key === 'azp') assert.ok(clients.has(value), at);
    if (key === 'backbone_user') assert.ok((demoData.users as Json[]).some((user) => user.login === value), at);
    if (key === 'workstation') assert.ok((demoData.workstations as Json[]).some((workstation) => workstation.id === value), at);
    if (key === 'merchandisingLoanType') assert.equal(value, facility.merchandisingLoanType, at);
    if (key === 'merchandisingLoanFacilityParameterType') assert.equal(value, facility.merchandisingLoanFacilityParameterType, at);
    if (key === 'loanInstallmentSequence') assert.ok((facility.installments as Json[]).some((installment) => installment.sequence === value), at);
    if (key === 'loanMaturityDate') assert.equal(value.dateContent, facility.finalMaturityDate, at);
    if (key === 'client_secret') assert.ok((demoData.realms as Json[]).some((realm) => (realm.clients as Json[]).some((client) => client.secret === value)), at);
  }
}

function validatorFor(doc: Json): (where: string, schema: Json, value: Json) => void {
  // Not strict: the auth service's documentation-only schemas carry OpenAPI's own words (format: password).
  const ajv = new Ajv2020.default({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addFormat('password', true);
  for (const [name, schema] of Object.entries(doc.components?.schemas ?? {})) ajv.addSchema(rewriteRefs(schema), `${componentBase}${name}`);
  return (where, schema, value) => {
    const validate = ajv.compile(rewriteRefs(schema));
    assert.ok(validate(value), `${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
  };
}

function initiationExample(doc: Json): Json {
  return doc.paths['/v1/term-deposits/initiate'].post.requestBody.content['application/json'].example;
}

test('the examples\' calendar is the demo data\'s (demo/sandbox.json)', () => {
  assert.equal(demoCalendar.businessDate, demoData.businessDate);
  for (const holiday of demoData.calendar.holidays as string[]) assert.equal(demoCalendar.isBusinessDay(holiday), false, holiday);
  assert.equal(demoCalendar.isBusinessDay('2026-03-07'), false, 'Saturday is weekend');
  assert.equal(demoCalendar.isBusinessDay('2026-03-09'), true);
});

describeEachStore('API docs page: the examples of /openapi.json', ({ server }) => {
  test('every request body and every JSON answer has an example, valid against its schema', async () => {
    const doc = await fetchDocument(server());
    const validate = validatorFor(doc);
    const examples = examplesOf(doc);
    assert.ok(examples.length > 60, `examples: ${examples.length}`);
    for (const { where, schema, example } of examples) validate(where, schema, example);
    // The one answer without a body.
    assert.equal(doc.paths['/v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute'].post.responses['204'].content, undefined);
  });

  test('the examples name the demo data\'s customer, accounts, product, currencies, loan facility and client', async () => {
    const doc = await fetchDocument(server());
    for (const { where, example } of examplesOf(doc)) assertDemoEntities(where, example);
    const loan = doc.paths['/v1/merchandising-loan/{merchandisingLoanId}/repayment-schedules/{installmentSequence}/execute'].post;
    const parameter = (name: string) => (loan.parameters as Json[]).find((candidate) => candidate.name === name)?.example;
    assert.equal(parameter('merchandisingLoanId'), demoData.merchandisingLoans[0].merchandisingLoanId);
    assert.equal(parameter('installmentSequence'), String(demoData.merchandisingLoans[0].installments[0].sequence));
    // Error records name the route they answer, as the real ones do.
    assert.equal(loan.responses['422'].content['application/json'].example.error.path, 'POST /v1/merchandising-loan/7000000001/repayment-schedules/1/execute');
    assert.equal(doc.paths['/v1/term-deposits/initiate'].post.responses['409'].content['application/json'].example.errordetail[0].code, 'TD-409-002');
    assert.equal(doc.info.title, 'coregate API');
    // The page says what a repeat of the same body answers, and how to try again; and where the collection is.
    assert.match(doc.info.description, /\*\*409\*\* naming the first operation/);
    assert.match(doc.info.description, /new `x-correlation-id`/);
    assert.match(doc.info.description, /\(\/collections\/postman\.json\)/);
  });

  test('the dated examples follow the core\'s business date: after an advance, "Try it out" succeeds, and a repeat of the body is 409 naming the first operation', async () => {
    const before = await fetchDocument(server());
    assert.equal(initiationExample(before).valueDate, demoData.businessDate);
    // A Saturday: the example's value date is the next business day, as the core wants.
    await server().coregate.core.advanceBusinessDate('2026-03-07');
    const after = await fetchDocument(server());
    const example = initiationExample(after);
    assert.equal(example.valueDate, '2026-03-09');
    assert.deepEqual(after.components.schemas.TermDepositInitiationRequest.examples, [example]);
    const answer = after.paths['/v1/term-deposits/initiate'].post.responses['200'].content['application/json'].example;
    assert.equal(answer.valueDate, '2026-03-09');
    assert.ok(answer.termDepositPeriod.maturityDate > '2026-06-06', JSON.stringify(answer.termDepositPeriod));

    const token = await demoToken(server(), demo.treasury);
    const send = () =>
      fetch(`${server().url}/v1/term-deposits/initiate`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(example) });
    const first = await send();
    const created = (await first.json()) as Json;
    assert.equal(first.status, 200, JSON.stringify(created));
    assert.equal(created.termDepositPeriod.maturityDate, answer.termDepositPeriod.maturityDate, 'the example answer is what the core answers');
    assert.equal(created.expectedInterestAmount, undefined);
    const repeat = await send();
    const refused = (await repeat.json()) as Json;
    assert.equal(repeat.status, 409, JSON.stringify(refused));
    assert.equal(refused.errordetail[0].code, 'TD-409-002');
    assert.match(refused.message, new RegExp(created.operationReference));

    // The collection is made from the same document: its body carries the same date.
    const collection = (await (await fetch(`${server().url}/collections/postman.json`)).json()) as Json;
    const initiate = (collection.item as Json[]).flatMap((folder) => folder.item as Json[]).find((item) => item.request.url.raw.endsWith('/v1/term-deposits/initiate'));
    assert.equal(JSON.parse(initiate.request.body.raw).valueDate, '2026-03-09');
  });
}, { flags: { sandbox: true } }); // The examples carry the demo client's secret in a sandbox only (docs/deployment.md, "The database and the master key").
