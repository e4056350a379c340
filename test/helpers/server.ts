/**
 * Starts a real coregate server on a free port for a test, with its logs captured in memory.
 * The server runs in-process (real HTTP, real store); tests that need a separate process use
 * `spawnCli` instead.
 */
import { Writable } from 'node:stream';
import { resolveConfig, type ConfigFlags } from '../../src/config.js';
import type { CoreBankingPort } from '../../src/core/port.js';
import { startCoregate, type Coregate } from '../../src/main.js';

export const demoDataFile = new URL('../../demo/sandbox.json', import.meta.url).pathname;

export const demo = {
  realm: 'sandbox',
  treasury: { clientId: 'treasury-app', secret: 'treasury-app-secret-change-me-0123456789abcdef' },
  branch: { clientId: 'branch-portal', secret: 'branch-portal-secret-change-me-0123456789abcd' },
  reporting: { clientId: 'reporting-app', secret: 'reporting-app-secret-change-me-0123456789abcd' },
} as const;

export interface TestServer {
  coregate: Coregate;
  url: string;
  /** Every log line the server wrote, as text. */
  logLines: string[];
  realmUrl(realm?: string): string;
  tokenUrl(realm?: string): string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  db: string;
  /** The data file to load: the demo file by default, null for none. */
  data?: string | null;
  env?: Record<string, string>;
  publicUrl?: string;
  /** Extra `coregate serve` flags, as resolveConfig takes them (coreTimeoutMs, duplicateWindow, ...). */
  flags?: ConfigFlags;
  /** Wraps the core port (fault injection). */
  wrapCore?: (core: CoreBankingPort) => CoreBankingPort;
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const flags: ConfigFlags = { port: '0', host: '127.0.0.1', db: options.db, ...options.flags };
  if (options.data !== null) flags.data = options.data ?? demoDataFile;
  if (options.publicUrl) flags.publicUrl = options.publicUrl;
  const config = resolveConfig(flags, { ...options.env });
  const coregate = await startCoregate(config, { log: { destination, level: 'debug' }, ...(options.wrapCore ? { wrapCore: options.wrapCore } : {}) });
  const realmUrl = (realm: string = demo.realm) => `${coregate.url}/realms/${realm}`;
  return {
    coregate,
    url: coregate.url,
    logLines,
    realmUrl,
    tokenUrl: (realm?: string) => `${realmUrl(realm)}/protocol/openid-connect/token`,
    close: () => coregate.close(),
  };
}

/** POSTs a form; `fields` may be a raw body string to send exactly what a test needs. */
export async function postForm(
  url: string,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) };
}

export function basicAuth(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`;
}

/** A token for a demo client, asserting success. */
export async function demoToken(
  server: TestServer,
  client: { clientId: string; secret: string } = demo.treasury,
  extra: Record<string, string> = {},
): Promise<string> {
  const response = await postForm(server.tokenUrl(), {
    grant_type: 'client_credentials',
    client_id: client.clientId,
    client_secret: client.secret,
    ...extra,
  });
  if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.access_token as string;
}

/** The compiled CLI (scripts/test.mjs builds dist/ before the tests run): `node <cliPath> ...`. */
export const cliPath = new URL('../../dist/src/cli/main.js', import.meta.url).pathname;
/** The repository root, the working directory of spawned CLI processes. */
export const repoRoot = new URL('../../', import.meta.url).pathname;
