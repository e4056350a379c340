/**
 * issue 12 item 4: start-up tells the truth. Records are never overwritten by the data file, so
 * when the file differs from the store, one warning per kind names what was not applied and how to
 * apply it; no secret is in it. A restart with the same file says nothing.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { readDemoData, tempDirectory, writeTempDataFile } from '../helpers/data-files.js';
import { demoDataFile, startTestServer } from '../helpers/server.js';

interface Demo {
  realms: Array<{ clients: Array<{ clientId: string; secret: string; scopes: string[] }> }>;
  users: Array<{ login: string; status: string }>;
  accounts: Array<{ accountNumber: string; balance: number }>;
}

function driftLines(logLines: string[]): Array<{ kind: string; msg: string; records: string[] }> {
  return logLines.map((line) => JSON.parse(line) as { kind: string; msg: string; records: string[] }).filter((entry) => /^data file: /.test(String(entry.msg)));
}

test('issue 12 item 4: an edited data file is named at start, one line per kind, with the fix; never the secret', async () => {
  const db = `sqlite:${join(tempDirectory('coregate-drift-'), 'drift.db')}`;
  const first = await startTestServer({ db, deployment: 'embedded' });
  await first.close();

  const again = await startTestServer({ db, deployment: 'embedded', data: demoDataFile });
  assert.deepEqual(driftLines(again.logLines), [], 'the same file: nothing to say');
  await again.close();

  const edited = readDemoData<Demo>();
  const newSecret = 'an-edited-secret-that-is-never-logged-0123456789';
  edited.realms[0]!.clients[0]!.secret = newSecret;
  edited.realms[0]!.clients[0]!.scopes = ['termDeposit:retrieve'];
  edited.users.find((user) => user.login === 'jdoe')!.status = 'Disabled';
  edited.accounts.find((account) => account.accountNumber === '1000000002')!.balance = 999;
  const server = await startTestServer({ db, deployment: 'embedded', data: writeTempDataFile(edited) });
  try {
    const lines = driftLines(server.logLines);
    assert.deepEqual(lines.map((line) => line.kind).sort(), ['accounts', 'clients', 'users']);
    const byKind = Object.fromEntries(lines.map((line) => [line.kind, line]));
    assert.deepEqual(byKind.clients?.records, ['sandbox/treasury-app (secret, scopes)']);
    assert.match(String(byKind.clients?.msg), /not applied \(records are never overwritten\).*Apply with `coregate clients rotate-secret\|enable\|disable`, or `coregate sandbox reset`/);
    assert.deepEqual(byKind.users?.records, ['jdoe (status)']);
    assert.deepEqual(byKind.accounts?.records, ['1000000002 (opening balance)']);
    assert.ok(!server.logLines.some((line) => line.includes(newSecret)), 'the secret is never logged');
  } finally {
    await server.close();
  }
});
