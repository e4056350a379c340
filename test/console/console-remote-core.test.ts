/**
 * The console in real Chromium with a remote core (`coregate serve --core-url`, the core on a
 * database of its own): every section renders, none says "not available" or shows an error, the
 * balances are the core's and move when an operation moves the core's money, and the loan
 * facility, term deposits and business date come from the core through its protocol.
 * Skipped with a message when Chromium is missing, except under CI=true (test/console/helpers.ts).
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { depositBody } from '../helpers/bodies.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { findChromium, loginUrl, operatorDataFile } from './helpers.js';

const browserFound = findChromium();

describe('console in Chromium with a remote core', { skip: 'skip' in browserFound ? browserFound.skip : undefined }, () => {
  let server: TestServer | undefined;
  let core: TestCoreServer | undefined;
  let browser: Browser | undefined;
  let page: Page;
  const drops: Array<() => Promise<void>> = [];
  const pageProblems: string[] = [];

  before(async () => {
    const sqlite = storeTargets[0];
    assert.ok(sqlite);
    const apiDb = await sqlite.create();
    const coreDb = await sqlite.create();
    drops.push(apiDb.drop, coreDb.drop);
    core = await startTestCoreServer({ db: coreDb.url, data: operatorDataFile() });
    server = await startTestServer({ db: apiDb.url, data: operatorDataFile(), flags: { sandbox: true, coreUrl: core.url }, deployment: 'embedded' });
    browser = await chromium.launch({ executablePath: 'path' in browserFound ? browserFound.path : '', args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
    page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await core?.close();
    for (const drop of drops) await drop();
  });

  const balanceCell = (accountNumber: string) => page.locator(`[data-account="${accountNumber}"] [data-balance]`);

  test('customers and accounts show the core\'s balances, which move without a reload when the core\'s money moves; the account\'s postings and chart come from the core', async () => {
    assert.ok(server && core);
    await page.goto((await loginUrl(server)).url);
    await balanceCell('1000000001').waitFor();
    assert.equal(await balanceCell('1000000001').getAttribute('data-balance'), '250000.00');
    const response = await fetch(`${server.url}/v1/term-deposits/initiate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await demoToken(server)}`, 'content-type': 'application/json' },
      body: JSON.stringify(depositBody(10000)),
    });
    assert.equal(response.status, 200);
    await page.locator('[data-account="1000000001"] [data-balance="240000.00"]').waitFor();
    assert.equal(await core.balanceOf('1000000001'), 24_000_000n, 'the page shows the core\'s own balance');
    await page.click('[data-account="1000000001"]');
    await page.locator('#account-detail [data-posting^="opening-"]').waitFor();
    await page.locator('#account-detail .chart canvas').waitFor();
    assert.equal(await page.locator('#account-detail [data-posting]').count(), 2, 'the opening balance and the deposit');
  });

  test('every section renders from the core or the API, none "not available", none an error', async () => {
    for (const section of ['bank', 'term-deposits', 'loans', 'operations', 'audit', 'clients', 'webhooks', 'business-date', 'sandbox', 'token-decoder']) {
      await page.click(`[data-section-link="${section}"]`);
      await page.locator(`section#${section}`).waitFor();
      await page.locator(`section#${section} :is(table, .hint, form, textarea, button)`).first().waitFor();
      assert.equal(await page.locator(`section#${section} .error`).count(), 0, `${section} shows an error`);
      assert.equal(await page.locator(`section#${section} .unavailable`).count(), 0, `${section} says it is not available`);
    }
    await page.click('[data-section-link="loans"]');
    assert.match(await page.locator('[data-facility="7000000001"]').innerText(), /Outstanding\s+60,000\.00 USD/);
    await page.click('[data-section-link="term-deposits"]');
    await page.locator('section#term-deposits table tbody tr').first().waitFor();
    assert.deepEqual(pageProblems, []);
  });
});
