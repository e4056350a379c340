/**
 * The remote core protocol's OpenAPI document (docs/core-protocol.md): the one `coregate core
 * serve` serves at GET /openapi.json is the one checked in as docs/core-protocol.openapi.json, and
 * it is complete — every body and answer of every route a named component (the commands, outcomes,
 * refusals, read-side, load-side and event schemas), each described, each example valid against
 * its schema — so that a bank can generate its types from the file without running coregate.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import SwaggerParser from '@apidevtools/swagger-parser';
import Ajv2020 from 'ajv/dist/2020.js';
import { coreRoutes } from '../../src/core-http/core-routes.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { repoRoot } from '../helpers/repo-root.js';
import { storeTargets } from '../helpers/stores.js';

const sqlite = storeTargets.find((target) => target.name === 'sqlite');
const regenerate = 'run: node --import tsx scripts/core-protocol-doc.ts (docs/core-protocol.md, "The remote core protocol")';

type Schema = Record<string, any>;

describe('the core protocol\'s OpenAPI document', { skip: sqlite?.skip }, () => {
  let core: TestCoreServer;
  let drop: () => Promise<void> = async () => {};
  let served: any;
  const checkedIn = JSON.parse(readFileSync(join(repoRoot, 'docs/core-protocol.openapi.json'), 'utf8'));

  before(async () => {
    if (!sqlite) throw new Error('no SQLite target');
    const created = await sqlite.create();
    drop = created.drop;
    // `coregate core serve` as it runs (core-service.ts), over real HTTP.
    core = await startTestCoreServer({ db: created.url });
    served = await (await fetch(`${core.url}/openapi.json`)).json();
  });
  after(async () => {
    await core?.close();
    await drop();
  });

  test('docs/core-protocol.openapi.json is the document `coregate core serve` serves at GET /openapi.json', () => {
    assert.deepEqual(served, checkedIn, `the served document and docs/core-protocol.openapi.json differ: ${regenerate}`);
  });

  test('the checked-in document is valid OpenAPI 3.1', async () => {
    await SwaggerParser.validate(structuredClone(checkedIn));
  });

  test('every body and answer of every route is a named component (commands, outcomes, refusals, read side, load side, events), and no schema is left inline unnamed', () => {
    const components = checkedIn.components.schemas as Record<string, Schema>;
    for (const name of ['TermDepositConstitutionCommand', 'LoanInstallmentExecutionCommand', 'TermDepositOutcome', 'LoanInstallmentOutcome', 'Refusal', 'Rejected', 'Customer', 'Account', 'Posting', 'TermDepositRecord', 'LoanFacility', 'LedgerReport', 'CoreEvent', 'EndOfDayReport', 'CoreData', 'CoreLoadSummary', 'DataRefused']) {
      assert.ok(components[name], `${name} is a component`);
    }
    let media = 0;
    for (const [path, methods] of Object.entries(checkedIn.paths as Record<string, Record<string, Schema>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        const bodies = [operation.requestBody?.content?.['application/json'], ...Object.values((operation.responses ?? {}) as Record<string, Schema>).map((response) => response.content?.['application/json'])];
        for (const content of bodies.filter(Boolean)) {
          media += 1;
          const ref = content.schema?.$ref as string | undefined;
          assert.match(ref ?? '', /^#\/components\/schemas\/[A-Za-z]+$/, `${method.toUpperCase()} ${path}: ${JSON.stringify(content.schema).slice(0, 120)}`);
          assert.ok(components[(ref ?? '').split('/').pop() ?? ''], `${ref} exists`);
        }
      }
    }
    // Every route of the table has its answers in the document.
    assert.ok(media >= coreRoutes.length * 2, `${media} bodies and answers for ${coreRoutes.length} routes`);
    const inline = JSON.stringify(checkedIn.paths).match(/"title":"[^"]+"/g) ?? [];
    assert.deepEqual(inline, [], 'a titled schema inline in the paths is not a component');
  });

  test('every component is described, and so is every field that is not a constant or a named component', () => {
    for (const [name, schema] of Object.entries(checkedIn.components.schemas as Record<string, Schema>)) {
      assert.ok(typeof schema.description === 'string' && schema.description.length > 0, `${name} has a description`);
      const objects = [schema, ...(schema.allOf ?? [])].filter((part: Schema) => part.properties);
      for (const part of objects) {
        for (const [field, property] of Object.entries(part.properties as Record<string, Schema>)) {
          if (property.$ref !== undefined || property.const !== undefined) continue;
          assert.ok(typeof property.description === 'string' && property.description.length > 0, `${name}.${field} has a description`);
        }
      }
    }
  });

  test('every example in the document is valid against its schema', () => {
    const ajv = new Ajv2020.default({ allErrors: true, strict: false });
    const components = checkedIn.components;
    const check = (schema: Schema, example: unknown, where: string) => {
      const validate = ajv.compile({ ...schema, components });
      assert.ok(validate(example), `${where}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(example)}`);
    };
    let examples = 0;
    for (const [name, schema] of Object.entries(components.schemas as Record<string, Schema>)) {
      for (const example of schema.examples ?? []) {
        check(schema, example, `components.schemas.${name}`);
        examples += 1;
      }
    }
    for (const [path, methods] of Object.entries(checkedIn.paths as Record<string, Record<string, Schema>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const content of [operation.requestBody?.content?.['application/json'], ...Object.values((operation.responses ?? {}) as Record<string, Schema>).map((response) => response.content?.['application/json'])]) {
          if (!content) continue;
          const shown = [...(content.example === undefined ? [] : [content.example]), ...Object.values(content.examples ?? {}).map((example: any) => example.value)];
          for (const example of shown) check(content.schema, example, `${method.toUpperCase()} ${path}`);
        }
      }
    }
    assert.ok(examples >= 20, `${examples} examples`);
  });
});
