/**
 * The schema compilers shared by a process's servers (src/schema-compilers.ts): a schema is
 * compiled once and its function reused by the next server, the functions validate and serialize
 * as fastify's own do, and a header schema that names a header in capitals is refused at start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { sharedSchemaController } from '../../src/schema-compilers.js';

const { buildValidator, buildSerializer } = sharedSchemaController.compilersFactory;
const ajvOptions = { customOptions: { coerceTypes: false, allErrors: true } };

test('the same schema, built anew by a second server, gets the function compiled for the first', () => {
  const body = () => Type.Object({ amount: Type.String({ pattern: '^[0-9]+$' }) }, { additionalProperties: false });
  const first = buildValidator({}, ajvOptions)({ schema: body(), method: 'POST', url: '/x', httpPart: 'body' });
  const second = buildValidator({}, ajvOptions)({ schema: body(), method: 'POST', url: '/y', httpPart: 'body' });
  assert.equal(second, first);
  assert.equal(first({ amount: '12' }), true);
  assert.equal(first({ amount: 'twelve' }), false);
  // Other options are another compiler: the schema compiles again.
  const coercing = buildValidator({}, { customOptions: { coerceTypes: true, allErrors: true } })({ schema: body(), method: 'POST', url: '/x', httpPart: 'body' });
  assert.notEqual(coercing, first);

  const answer = () => Type.Object({ id: Type.String() });
  const serialize = buildSerializer({}, {})({ schema: answer(), method: 'GET', url: '/x', httpStatus: '200' });
  assert.equal(buildSerializer({}, {})({ schema: answer(), method: 'GET', url: '/z', httpStatus: '200' }), serialize);
  assert.equal(serialize({ id: 'a', secret: 'not declared, not sent' }), '{"id":"a"}');
});

test('two servers with the shared compilers validate and answer as declared', async () => {
  for (let round = 0; round < 2; round += 1) {
    const app = Fastify({ schemaController: sharedSchemaController });
    app.post(
      '/echo',
      {
        schema: {
          headers: Type.Object({ 'x-tag': Type.String({ minLength: 2 }) }),
          body: Type.Object({ n: Type.Integer() }, { additionalProperties: false }),
          response: { 200: Type.Object({ n: Type.Integer() }) },
        },
      },
      async (request) => ({ ...(request.body as object), extra: 'dropped by the serializer' }),
    );
    const ok = await app.inject({ method: 'POST', url: '/echo', headers: { 'X-Tag': 'ab' }, payload: { n: 3 } });
    assert.equal(ok.statusCode, 200, `round ${round}`);
    assert.equal(ok.body, '{"n":3}');
    assert.equal((await app.inject({ method: 'POST', url: '/echo', headers: { 'x-tag': 'a' }, payload: { n: 3 } })).statusCode, 400);
    assert.equal((await app.inject({ method: 'POST', url: '/echo', headers: { 'x-tag': 'ab' }, payload: { n: 'x' } })).statusCode, 400);
    await app.close();
  }
});

test('a header schema that names a header in capitals is refused at start (request headers arrive in lowercase)', async () => {
  const app = Fastify({ schemaController: sharedSchemaController });
  app.get('/h', { schema: { headers: Type.Object({ 'X-Tag': Type.String() }) } }, async () => 'never');
  await assert.rejects(async () => app.ready(), /GET \/h: the header schema names "X-Tag"; header names are matched in lowercase/);
});
