/**
 * Helpers of the console tests: a data file with an operator client, logging in through a
 * one-time login token, and finding Chromium for the browser tests.
 */
import { existsSync } from 'node:fs';
import { readDemoData, writeTempDataFile } from '../helpers/data-files.js';
import type { TestServer } from '../helpers/server.js';
import { createLoginToken } from '../../src/store/operator-sessions.js';

/** A client of the test data file granted the operator scope (the demo file has none). */
export const operatorClient = { clientId: 'console-operator', secret: 'console-operator-secret-change-me-0123456789ab' } as const;

/** Every secret of the test data file: none may appear in a page, a script or an operator API answer. */
export function dataFileSecrets(): string[] {
  const data = readDemoData<{ realms: Array<{ clients: Array<{ secret: string }> }> }>();
  return [...data.realms.flatMap((realm) => realm.clients.map((client) => client.secret)), operatorClient.secret];
}

/** The demo data plus the operator client. */
export function operatorDataFile(): string {
  const data = readDemoData<{ realms: Array<{ clients: unknown[] }> }>();
  data.realms[0]?.clients.push({
    clientId: operatorClient.clientId,
    secret: operatorClient.secret,
    enabled: true,
    grants: ['client_credentials'],
    scopes: ['coregate:operator'],
  });
  return writeTempDataFile(data, 'coregate-console-');
}

/** A fresh one-time login URL for the server (what `coregate console` prints), issued at `nowEpochMs` (the server's clock's time when it runs on a test's). */
export async function loginUrl(server: TestServer, nowEpochMs = Date.now()): Promise<{ url: string; token: string }> {
  const { token } = await createLoginToken(server.coregate.store.db, 'cli', nowEpochMs);
  return { url: `${server.url}/console/login?token=${encodeURIComponent(token)}`, token };
}

/** Logs in over HTTP and answers the session cookie ("coregate_operator=..."). */
export async function sessionCookie(server: TestServer): Promise<string> {
  const { url } = await loginUrl(server);
  const response = await fetch(url, { redirect: 'manual' });
  const setCookie = response.headers.get('set-cookie') ?? '';
  const cookie = setCookie.split(';')[0] ?? '';
  if (response.status !== 303 || !cookie.startsWith('coregate_operator=')) throw new Error(`login failed: ${response.status} ${setCookie}`);
  return cookie;
}

/**
 * Chromium for the browser tests: COREGATE_CHROMIUM, else Debian's /usr/bin/chromium. Missing,
 * the browser tests are skipped with this message, except under CI=true where they must run.
 */
export function findChromium(): { path: string } | { skip: string } {
  const path = process.env.COREGATE_CHROMIUM ?? '/usr/bin/chromium';
  if (existsSync(path)) return { path };
  const message = `Chromium not found at ${path} (set COREGATE_CHROMIUM, or apt-get install chromium): browser tests skipped`;
  if (process.env.CI === 'true') throw new Error(`${message.replace(': browser tests skipped', '')}; CI=true requires the browser tests`);
  return { skip: message };
}
