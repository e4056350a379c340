/**
 * Demo secrets outside sandbox mode (docs/deployment.md, "The database and the master key";
 * docs/collections.md): a start without `--sandbox` warns, in one line naming the clients and never
 * a secret, about every client whose stored secret hash verifies a demo secret (the bundled demo
 * data's, or the loaded data file's containing `change-me`); `coregate check` lists them as a
 * warning that does not fail it; the Postman collection's clientSecret is present and empty. A
 * rotated secret is no longer named. In sandbox mode the demo secrets are what the sandbox is for:
 * no warning, and the collection keeps the demo client's secret.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import { send } from '../helpers/http.js';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

const demoSecrets = [demo.treasury.secret, demo.branch.secret, demo.reporting.secret];
const target = storeTargets[0]!;

function demoSecretWarnings(server: TestServer): Array<Record<string, any>> {
  return server.logLines.map((line) => JSON.parse(line) as Record<string, any>).filter((line) => typeof line.msg === 'string' && line.msg.includes('a demo secret'));
}

async function postmanVariables(server: TestServer): Promise<{ text: string; variables: Record<string, string> }> {
  const answer = await send(`${server.url}/collections/postman.json`, {});
  assert.equal(answer.status, 200);
  const variables = Object.fromEntries((answer.body.variable as Array<{ key: string; value: string }>).map((variable) => [variable.key, variable.value]));
  return { text: JSON.stringify(answer.body), variables };
}

describe('outside sandbox mode, with the demo data', () => {
  let server: TestServer;
  let db = '';
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const created = await target.create();
    drop = created.drop;
    db = created.url;
    server = await startTestServer({ db, deployment: 'embedded' });
  });
  after(async () => {
    await server?.close();
    await drop?.();
  });

  test('the start warns once, naming every client with a demo secret and no secret', () => {
    const warnings = demoSecretWarnings(server);
    assert.equal(warnings.length, 1, server.logLines.join('\n'));
    assert.equal(warnings[0]?.level, 40, 'at warn');
    assert.deepEqual(warnings[0]?.clients, ['sandbox/branch-portal', 'sandbox/reporting-app', 'sandbox/treasury-app']);
    assert.match(String(warnings[0]?.msg), /rotate-secret/);
    const everything = server.logLines.join('\n');
    for (const secret of demoSecrets) assert.ok(!everything.includes(secret), 'no log line holds a secret');
  });

  test('the Postman collection carries no secret: clientSecret is present and empty', async () => {
    const { text, variables } = await postmanVariables(server);
    assert.equal(variables.clientSecret, '');
    assert.equal(variables.clientId, demo.treasury.clientId);
    for (const secret of demoSecrets) assert.ok(!text.includes(secret), 'no demo secret in the collection');
  });

  test('the API document carries no secret either, in any form it is served (/openapi.json, /docs/json, /docs/yaml): its examples show a placeholder', async () => {
    for (const path of ['/openapi.json', '/docs/json', '/docs/yaml']) {
      const text = await (await fetch(`${server.url}${path}`)).text();
      for (const secret of demoSecrets) assert.ok(!text.includes(secret), `no demo secret in ${path}`);
      assert.ok(text.includes('your-client-secret'), `${path}: the token request example keeps a client_secret, a placeholder`);
    }
  });

  test('coregate check lists them as a warning (exit 0); after a rotation the client is no longer listed', async () => {
    const human = await runCli(['check', '--db', db]);
    assert.equal(human.code, 0, human.stdout + human.stderr);
    assert.match(human.stdout, /^Client secrets WARNING: 3 clients have a demo secret .*which does not fail the check\.\n {2}- sandbox\/branch-portal\n {2}- sandbox\/reporting-app\n {2}- sandbox\/treasury-app\n {2}What to do: .*rotate-secret/m);
    for (const secret of demoSecrets) assert.ok(!human.stdout.includes(secret));

    const rotated = await runCli(['clients', 'rotate-secret', '--realm', 'sandbox', '--client-id', demo.treasury.clientId, '--db', db, '--json']);
    assert.equal(rotated.code, 0, rotated.stderr);
    const json = await runCli(['check', '--db', db, '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { ok: boolean; clientSecrets: { checked: boolean; demoSecrets: string[] } };
    assert.equal(report.ok, true, 'a warning, not a failure');
    assert.deepEqual(report.clientSecrets, { checked: true, demoSecrets: ['sandbox/branch-portal', 'sandbox/reporting-app'] });
  });
});

test('a data file\'s own secrets containing change-me are demo secrets too; its other secrets are not', async () => {
  const data = readDemoData<{ realms: Array<Record<string, unknown>> }>();
  data.realms.push({
    name: 'bank',
    clients: [
      { clientId: 'bank-app', secret: 'bank-app-secret-CHANGE-ME-before-production', scopes: ['termDeposit:retrieve'] },
      { clientId: 'ops-app', secret: randomBytes(32).toString('base64url'), scopes: ['termDeposit:retrieve'] },
    ],
  });
  const created = await target.create();
  const server = await startTestServer({ db: created.url, data: writeTempDataFile(data), deployment: 'embedded' });
  try {
    assert.deepEqual(demoSecretWarnings(server)[0]?.clients, ['bank/bank-app', 'sandbox/branch-portal', 'sandbox/reporting-app', 'sandbox/treasury-app']);
  } finally {
    await server.close();
    await created.drop();
  }
});

test('in sandbox mode the demo secrets are expected: no warning, and the collection keeps the demo client\'s secret', async () => {
  const created = await target.create();
  const server = await startTestServer({ db: created.url, deployment: 'embedded', flags: { sandbox: true } });
  try {
    assert.deepEqual(demoSecretWarnings(server), []);
    assert.equal((await postmanVariables(server)).variables.clientSecret, demo.treasury.secret);
    assert.ok((await (await fetch(`${server.url}/openapi.json`)).text()).includes(demo.treasury.secret), 'the document\'s examples work on the demo data');
  } finally {
    await server.close();
    await created.drop();
  }
});
