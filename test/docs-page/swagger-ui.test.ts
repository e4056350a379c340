/**
 * The API docs page (/docs) in real Chromium (issue 11 §6): coregate's name instead of the
 * framework's logo, the "Auth service" tag, "Authorize" obtains a token from the sandbox realm's
 * token endpoint with the demo client, and "Try it out" + Execute with the filled example of the
 * term deposit initiation answers 200.
 */
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { demo, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { chromiumMissing, chromiumPath } from './browser.js';

const skip = chromiumMissing();
const sqlite = storeTargets.find((target) => target.name === 'sqlite');
/** Generous bounds for a busy machine: they only stop a hung test, nothing is timed. */
const stepTimeoutMs = 30_000;

describe('API docs page in Chromium (/docs)', { skip }, () => {
  let server: TestServer;
  let drop: () => Promise<void>;
  let browser: Browser;
  let page: Page;
  const tokenRequests: Array<{ url: string; authorization: string | undefined; body: string | null }> = [];

  before(async () => {
    if (!sqlite) throw new Error('no SQLite store target');
    const store = await sqlite.create();
    drop = store.drop;
    server = await startTestServer({ db: store.url, deployment: 'embedded' });
    browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
    page = await browser.newPage();
    page.setDefaultTimeout(stepTimeoutMs);
    page.on('request', (request) => {
      if (request.url().endsWith('/protocol/openid-connect/token')) {
        tokenRequests.push({ url: request.url(), authorization: request.headers().authorization, body: request.postData() });
      }
    });
    await page.goto(`${server.url}/docs`);
    await page.locator('.swagger-ui .information-container .title').waitFor();
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await drop?.();
  });

  test('the page shows coregate\'s name and wordmark, not the Swagger logo', async () => {
    assert.equal(await page.title(), 'coregate API');
    const logo = page.locator('.topbar-wrapper img').first();
    const source = (await logo.getAttribute('src')) ?? '';
    assert.match(source, /^data:image\/svg\+xml;base64,/);
    const svg = Buffer.from(source.slice(source.indexOf(',') + 1), 'base64').toString('utf8');
    assert.match(svg, /coregate/);
    assert.doesNotMatch(svg, /swagger/i);
    assert.match((await page.locator('.information-container .title').textContent()) ?? '', /coregate/);
    const icon = await page.locator('link[rel="icon"]').first().getAttribute('href');
    assert.equal(icon, '/docs/static/theme/coregate.svg');
    assert.match(await (await fetch(`${server.url}${icon}`)).text(), /<svg/);
  });

  test('the explore box names /openapi.json, the document the page shows', async () => {
    assert.equal(await page.locator('.topbar input#download-url-input').inputValue(), '/openapi.json');
    assert.match((await page.locator('.information-container .title').textContent()) ?? '', /^coregate API/);
  });

  test('an answer\'s example is the demo data\'s, never one invented from a pattern', async () => {
    const operation = page.locator('#operations-Term_deposits-retrieveTermDeposit');
    await operation.locator('.opblock-summary').click();
    const example = operation.locator('.responses-table .response[data-code="200"] .microlight').first();
    await example.waitFor();
    const shown = JSON.parse((await example.textContent()) ?? '') as Record<string, any>;
    assert.deepEqual(shown.termDepositProduct, { productCode: 'TDFIX', componentCode: 'TD30-365' });
    assert.equal(shown.sourceAccount.accountIdentification, '1000000001');
    await operation.locator('.opblock-summary').click();
  });

  test('the auth endpoints have their own tag "Auth service", and the description links the console', async () => {
    const tag = page.locator('.opblock-tag-section h3', { hasText: 'Auth service' });
    await tag.waitFor();
    assert.match((await tag.textContent()) ?? '', /OAuth 2\.0 authorization server/);
    assert.equal(await page.locator('.opblock-tag-section h3', { hasText: /^default/ }).count(), 0, 'no "default" tag');
    assert.equal(await page.locator('.information-container a[href="/console"]').count(), 1);
  });

  test('Authorize with the demo client obtains a token from the sandbox realm\'s token endpoint', async () => {
    await page.locator('.scheme-container button.authorize').click();
    const dialog = page.locator('.dialog-ux .modal-ux');
    await dialog.waitFor();
    const oauth = dialog.locator('.auth-container', { hasText: 'clientCredentials' });
    await oauth.locator('input#client_id_clientCredentials').fill(demo.treasury.clientId);
    await oauth.locator('input#client_secret_clientCredentials').fill(demo.treasury.secret);
    await oauth.getByText('select all').click();
    await oauth.locator('button.authorize').click();
    await oauth.locator('button', { hasText: 'Logout' }).waitFor();
    assert.match(await oauth.innerText(), /Authorized/);
    assert.equal(await oauth.locator('.errors').count(), 0, await oauth.innerText());

    assert.equal(tokenRequests.length, 1);
    const [request] = tokenRequests;
    assert.equal(request?.url, `${server.url}/realms/sandbox/protocol/openid-connect/token`);
    assert.equal(request?.authorization, `Basic ${Buffer.from(`${demo.treasury.clientId}:${demo.treasury.secret}`).toString('base64')}`);
    const form = new URLSearchParams(request?.body ?? '');
    assert.equal(form.get('grant_type'), 'client_credentials');
    assert.deepEqual(form.get('scope')?.split(' ').sort(), ['merchandisingLoan:execute', 'termDeposit:initiate', 'termDeposit:retrieve']);
    await dialog.locator('button.close-modal').click();
    await dialog.waitFor({ state: 'detached' });
  });

  test('Try it out + Execute on the term deposit initiation with the filled example: 200', async () => {
    const operation = page.locator('#operations-Term_deposits-initiateTermDeposit');
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    const body = operation.locator('textarea.body-param__text');
    const filled = JSON.parse(await body.inputValue()) as Record<string, any>;
    assert.equal(filled.customerReference, 'C0001');
    assert.equal(filled.valueDate, '2026-03-02');
    assert.equal(filled.principalAmount.amountValue, 5000);
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    const responseBody = (await operation.locator('.live-responses-table .response-col_description .microlight').first().textContent()) ?? '';
    assert.equal((await status.textContent())?.trim(), '200', responseBody);
    assert.match(responseBody, /"termDepositAccount"/);
  });
});
