/** Ports and adapters (STYLE.md): the core's rules know nothing of HTTP, JWT or the API. */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/from\s+'([^']+)'/g)].map((match) => match[1] ?? '');

test('src/core imports neither fastify, jose, nor the api/auth/cli layers', () => {
  for (const file of sources('src/core')) {
    for (const specifier of importsOf(file)) {
      assert.ok(!/^(fastify|@fastify\/|jose)/.test(specifier), `${file} imports ${specifier}`);
      assert.ok(!/\/(api|auth|cli)\//.test(specifier), `${file} imports ${specifier}`);
    }
  }
});

test('only src/main.ts wires the store, the core and the business API together', () => {
  const wiring = sources('src').filter((file) => /new ReferenceCore\(|new OperationRunner\(/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(wiring, ['src/main.ts']);
});
