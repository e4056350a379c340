/**
 * issue 12 item 9: a database that cannot be opened is named with the fix, never "Database
 * migration unknown failed". The real CLI process, which exits with the message.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCliProcess } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-startup-errors-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('issue 12 item 9: PostgreSQL not listening → the message names the address, asks whether it runs, and names --db', async () => {
  const port = await closedPort();
  const result = await runCliProcess(['serve', '--port', '0', '--db', `postgres://127.0.0.1:${port}/coregate`]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, new RegExp(`cannot open the database postgres://127\\.0\\.0\\.1:${port}/coregate: nothing accepts connections at 127\\.0\\.0\\.1:${port} \\(is PostgreSQL running\\?\\); check --db / COREGATE_DB`));
  assert.doesNotMatch(result.stderr, /migration unknown/);
});

test('issue 12 item 9: a file that is not a SQLite database → named, with what it is and the fix', async () => {
  const path = join(dir, 'not-a-database.db');
  writeFileSync(path, 'this is not a database, just text that is long enough to have a header page\n'.repeat(20));
  const result = await runCliProcess(['serve', '--port', '0', '--db', `sqlite:${path}`]);
  assert.notEqual(result.code, 0);
  assert.match(result.stderr, new RegExp(`cannot open the database sqlite:${path.replace(/[.]/g, '\\.')}: .*not a coregate SQLite database; check --db / COREGATE_DB`));
});
