/**
 * The console's sandbox views in real Chromium (docs/sandbox.md, "The request log"; issue 27): the
 * request log with its filters, a forced scenario shown in the log and in the operations view, and
 * the links from a request to its operation. Skipped with a message when Chromium is missing,
 * except under CI=true.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { depositBody } from '../helpers/bodies.js';
import { initiatePath, send } from '../helpers/http.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { findChromium, loginUrl, operatorDataFile } from './helpers.js';

const browserFound = findChromium();

describe('console sandbox views in Chromium: the request log and forced scenarios', { skip: 'skip' in browserFound ? browserFound.skip : undefined }, () => {
  let server: TestServer;
  let drop: () => Promise<void>;
  let browser: Browser;
  let page: Page;
  const pageProblems: string[] = [];
  const forcedId = `forced-${randomUUID()}`;
  const plainId = `plain-${randomUUID()}`;
  let forcedReference = '';

  before(async () => {
    const created = await storeTargets[0]!.create();
    drop = created.drop;
    server = await startTestServer({ db: created.url, data: operatorDataFile(), flags: { sandbox: true }, deployment: 'embedded' });
    browser = await chromium.launch({ executablePath: 'path' in browserFound ? browserFound.path : '', args: process.getuid?.() === 0 ? ['--no-sandbox'] : [] });
    page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage();
    page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));
    const token = await demoToken(server);
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const forced = await send(`${server.url}${initiatePath}`, { method: 'POST', headers: { ...headers, 'x-correlation-id': forcedId, 'coregate-scenario': 'core-unavailable' }, body: JSON.stringify(depositBody(3101)) });
    assert.equal(forced.status, 502);
    forcedReference = (forced.headers.get('location') ?? '').replace('/v1/operations/', '');
    const plain = await send(`${server.url}${initiatePath}`, { method: 'POST', headers: { ...headers, 'x-correlation-id': plainId }, body: JSON.stringify(depositBody(3102)) });
    assert.equal(plain.status, 200);
    await page.goto((await loginUrl(server)).url);
    await page.locator('[data-session="session"]').waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await drop?.();
  });

  test('the request log lists every client\'s requests with status and scenario; the 5xx filter keeps the forced 502 only; a request opens to its headers (no Authorization) and bodies', async () => {
    await page.goto(`${server.url}/console#requests`);
    const forcedRow = page.locator('[data-request-log] tr[data-request]', { hasText: forcedId });
    await forcedRow.waitFor();
    assert.equal(await forcedRow.locator('[data-scenario]').innerText(), 'core-unavailable');
    assert.equal(await forcedRow.locator('[data-status]').innerText(), '502');
    await page.locator('[data-request-log] tr[data-request]', { hasText: plainId }).waitFor();

    await page.locator('[data-request-filters] input[name="status"]').fill('5xx');
    await page.locator('[data-request-filters] button[type="submit"]').click();
    await page.locator('[data-request-log] tr[data-request]', { hasText: plainId }).waitFor({ state: 'detached' });
    const statuses = await page.locator('[data-request-log] [data-status]').allInnerTexts();
    assert.ok(statuses.length >= 1 && statuses.every((status) => status.startsWith('5')), statuses.join(','));

    await forcedRow.click();
    const exchange = page.locator('.exchange');
    await exchange.waitFor();
    const text = await exchange.innerText();
    assert.match(text, /coregate-scenario: core-unavailable/);
    assert.match(text, /CORE_UNAVAILABLE/);
    assert.doesNotMatch(text, /authorization/i);
    assert.deepEqual(pageProblems, []);
  });

  test('a request links to its operation, which shows the scenario that forced it; the operations list shows it too', async () => {
    await page.goto(`${server.url}/console#requests?correlationId=${forcedId}`);
    const link = page.locator('[data-request-log] [data-operation-link]').first();
    await link.waitFor();
    await link.click();
    const operation = page.locator(`tr[data-operation="${forcedReference}"]`);
    await operation.waitFor();
    assert.equal(await operation.locator('[data-scenario]').innerText(), 'core-unavailable');
    assert.match(page.url(), new RegExp(`#operations\\?reference=${forcedReference}`));

    await page.goto(`${server.url}/console#operations`);
    await page.locator(`tr[data-operation="${forcedReference}"] [data-scenario="core-unavailable"]`).waitFor();
    assert.deepEqual(pageProblems, []);
  });
});
