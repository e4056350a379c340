/**
 * The console shows what `coregate check` reports of a core that refuses outside its protocol: the
 * operations settled with REJECTED_BY_CORE (a refusal coregate cannot name,
 * docs/core-protocol.md), above the operations, each linked to its operation; nothing while there
 * is none. In real Chromium, the API in front of a remote core through the fault proxy, which
 * answers one command for the core with a refusal name the catalogue does not know.
 * Skipped with a message when Chromium is missing, except under CI=true (test/console/helpers.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { depositBody } from '../helpers/bodies.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { FaultProxy, onRequests } from '../helpers/fault-proxy.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { findChromium, loginUrl } from './helpers.js';

const browserFound = findChromium();

describe('console: refusals of the core that coregate cannot name', { skip: 'skip' in browserFound ? browserFound.skip : undefined }, () => {
  let server: TestServer | undefined;
  let core: TestCoreServer | undefined;
  let proxy: FaultProxy | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const drops: Array<() => Promise<void>> = [];

  before(async () => {
    const sqlite = storeTargets[0];
    assert.ok(sqlite);
    const apiDb = await sqlite.create();
    const coreDb = await sqlite.create();
    drops.push(apiDb.drop, coreDb.drop);
    core = await startTestCoreServer({ db: coreDb.url });
    proxy = await FaultProxy.start(core.url);
    server = await startTestServer({ db: apiDb.url, flags: { operatorApi: true, coreUrl: proxy.url }, deployment: 'embedded' });
    browser = await chromium.launch({ executablePath: 'path' in browserFound ? browserFound.path : '', args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await proxy?.close();
    await core?.close();
    for (const drop of drops) await drop();
  });

  test('none yet: the operations section shows no finding; once the core refused with a name the catalogue does not know, it shows how many, with a link to the operation and the core\'s refusal', async () => {
    assert.ok(server && proxy);
    await page.goto((await loginUrl(server)).url);
    await page.click('[data-section-link="operations"]');
    await page.locator('section#operations :is(table, .hint)').first().waitFor();
    // The finding was read, and there is none: its empty marker, and no banner.
    await page.locator('[data-unrecognised-core-refusals="0"]').waitFor({ state: 'attached' });
    assert.equal(await page.locator('.error[data-unrecognised-core-refusals]').count(), 0);

    const token = await demoToken(server);
    const refusal = { kind: 'respond' as const, status: 200, body: JSON.stringify({ status: 'Rejected', refusal: { name: 'accountFrozen', code: 'TD-422-077', message: 'frozen by compliance' } }) };
    const refused = await proxy.withFault(onRequests((request) => request.method === 'POST' && request.path.startsWith('/core/v1/term-deposit-constitutions/'), refusal), () =>
      fetch(`${server?.url}/v1/term-deposits/initiate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': randomUUID() },
        body: JSON.stringify(depositBody(1500)),
      }),
    );
    assert.equal(refused.status, 422);
    assert.equal(((await refused.json()) as { errordetail: Array<{ code: string }> }).errordetail[0]?.code, 'TD-422-091');

    // The finding is read when the section mounts (and every 30 s): a reload shows it at once.
    await page.reload();
    await page.click('[data-section-link="operations"]');
    const finding = page.locator('.error[data-unrecognised-core-refusals]');
    await finding.waitFor();
    assert.equal(await finding.getAttribute('data-unrecognised-core-refusals'), '1');
    const text = await finding.innerText();
    assert.match(text, /1 operation in the last 7 days refused by the core with a refusal coregate cannot name/);
    assert.match(text, /TD-422-091/);
    assert.match(text, /accountFrozen TD-422-077/);
    assert.match(text, /frozen by compliance/);
    const link = finding.locator('a[href^="#operations?reference="]');
    assert.equal(await link.count(), 1);
    await link.click();
    await page.locator('[data-error-record]').first().waitFor();
    assert.match(await page.locator('[data-error-record]').first().innerText(), /REJECTED_BY_CORE/);
  });
});
