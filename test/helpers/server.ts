/**
 * Starts a real coregate server on a free port for a test, with its logs captured in memory.
 * The server runs in-process (real HTTP, real store); tests that need a separate process use
 * `spawnCli` instead.
 */
import { runSigningKeys } from './signing-keys.js';
import type { Clock } from '../../src/core/clock.js';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { resolveConfig, type ConfigFlags } from '../../src/config.js';
import { defaultConnectionLimits } from '../../src/connection-limits.js';
import type { CoreBankingPort } from '../../src/core/port.js';
import { startCoregate, type Coregate } from '../../src/main.js';
import { repoRoot } from './repo-root.js';
import { exchange, serveWithoutSocket } from './transport.js';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';

export const demoDataFile = join(repoRoot, 'demo/sandbox.json');

let spoolDirectory: string | undefined;

/**
 * The audit spool directory (docs/deployment.md, "The audit spool") of this test file's servers,
 * in-process and spawned: one per test process, made on first use and removed when the process
 * exits, so that no test writes to the repository's ./data/audit-spool, and a server restarted by
 * its test finds what the one before it spooled. A test about the spool gives its own.
 */
export function testAuditSpool(): string {
  if (spoolDirectory === undefined) {
    const made = mkdtempSync(join(tmpdir(), 'coregate-spool-'));
    spoolDirectory = made;
    process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  }
  return spoolDirectory;
}

export const demo = {
  realm: 'sandbox',
  treasury: { clientId: 'treasury-app', secret: 'treasury-app-secret-change-me-0123456789abcdef' },
  branch: { clientId: 'branch-portal', secret: 'branch-portal-secret-change-me-0123456789abcd' },
  reporting: { clientId: 'reporting-app', secret: 'reporting-app-secret-change-me-0123456789abcd' },
} as const;

export interface TestServer {
  coregate: Coregate;
  /** Every API instance (two in the two-instances deployment): a test drives the background loops of each. */
  instances: Coregate[];
  url: string;
  /** Every log line the server wrote, as text. */
  logLines: string[];
  /** The remote core's URL in the remote-core deployment: operator commands on this API's database pass it (--core-url). */
  coreUrl?: string | undefined;
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
  /** The instance's clock (test/helpers/fake-clock.ts): its loops then run when the test drives them. */
  clock?: Clock;
  /** Overrides COREGATE_TEST_DEPLOYMENT (a test about one deployment in particular). */
  deployment?: TestDeployment;
}

/**
 * The deployment the business API tests run against (issue 8: every rule holds on all three):
 * `embedded` (the default), `remote-core` (the API reaches a core server over HTTP; the core shares
 * the test's database, so that the tests' ledger probes read what the core wrote), or
 * `two-instances` (two API instances on the test's database, requests alternating between them
 * through a round-robin proxy). Set by COREGATE_TEST_DEPLOYMENT; scripts/test.mjs runs the API
 * suites once per deployment.
 */
export type TestDeployment = 'embedded' | 'remote-core' | 'two-instances';
export const testDeployment: TestDeployment = parseDeployment(process.env.COREGATE_TEST_DEPLOYMENT);

function parseDeployment(value: string | undefined): TestDeployment {
  if (value === undefined || value === '' || value === 'embedded') return 'embedded';
  if (value === 'remote-core' || value === 'two-instances') return value;
  throw new Error(`COREGATE_TEST_DEPLOYMENT must be embedded, remote-core or two-instances, got "${value}"`);
}

export async function startTestServer(options: TestServerOptions): Promise<TestServer> {
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const deployment = options.deployment ?? testDeployment;
  const flags: ConfigFlags = { port: '0', host: '127.0.0.1', db: options.db, auditSpool: testAuditSpool(), ...options.flags };
  if (options.data !== null) flags.data = options.data ?? demoDataFile;
  if (options.publicUrl) flags.publicUrl = options.publicUrl;
  const closers: Array<() => Promise<void>> = [];
  if (deployment === 'remote-core' && flags.coreUrl === undefined && flags.role !== 'auth') {
    const { startTestCoreServer } = await import('./core-server.js');
    const core = await startTestCoreServer({ db: options.db, ...(options.data === null ? {} : { data: options.data ?? demoDataFile }) });
    flags.coreUrl = core.url;
    closers.push(() => core.close());
  }
  let balancer: RoundRobin | undefined;
  if (deployment === 'two-instances') {
    balancer = await RoundRobin.start();
    flags.publicUrl ??= balancer.url;
  }
  const start = () => startCoregate(resolveConfig(flags, { ...options.env }), { log: { destination, level: 'debug' }, signingKeys: runSigningKeys, ...(options.wrapCore ? { wrapCore: options.wrapCore } : {}), ...(options.clock ? { clock: options.clock } : {}) });
  const coregate = await start();
  closers.unshift(() => coregate.close());
  let url = coregate.url;
  const instances = [coregate];
  // The embedded deployment is one instance in this process: the shared helpers' requests reach it
  // without a socket (transport.ts). Not over TLS: the requests a test makes there are about the
  // connection itself. The other deployments are about HTTP between their parts.
  if (deployment === 'embedded' && !url.startsWith('https:')) {
    const forget = serveWithoutSocket(new URL(url).origin, coregate.app);
    closers.unshift(async () => forget());
  }
  if (balancer) {
    const second = await start();
    instances.push(second);
    closers.unshift(() => second.close());
    balancer.targets = [coregate.url, second.url];
    closers.push(() => balancer.close());
    url = balancer.url;
  }
  const realmUrl = (realm: string = demo.realm) => `${url}/realms/${realm}`;
  return {
    coregate,
    instances,
    url,
    logLines,
    coreUrl: flags.coreUrl,
    realmUrl,
    tokenUrl: (realm?: string) => `${realmUrl(realm)}/protocol/openid-connect/token`,
    close: async () => {
      for (const close of closers) await close();
    },
  };
}

/** A minimal load balancer for the two-instances deployment: each request goes to the next instance. */
class RoundRobin {
  targets: string[] = [];
  #next = 0;

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<RoundRobin> {
    let balancer: RoundRobin | undefined;
    // Idle connections are kept as long as coregate keeps them (72 s), as a load balancer in front
    // of it would: with Node's default of 5 s, a test's client could reuse a connection the balancer
    // was closing after a pause of about that length (undici's idle timers are coarse under load),
    // and its request failed with "fetch failed".
    const server = createServer({ keepAliveTimeout: defaultConnectionLimits.keepAliveTimeoutMs }, (request, response) => balancer?.forward(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as AddressInfo;
    balancer = new RoundRobin(server, `http://127.0.0.1:${address.port}`);
    return balancer;
  }

  forward(request: IncomingMessage, response: ServerResponse): void {
    const target = new URL(this.targets[this.#next++ % this.targets.length] ?? '');
    const upstream = httpRequest(
      // Raw headers, as received: a repeated header (two Authorization headers) reaches the instance as sent.
      { host: target.hostname, port: target.port, method: request.method, path: request.url, headers: request.rawHeaders as unknown as Record<string, string> },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(response);
      },
    );
    // As a load balancer does (nginx's 502 Bad Gateway), with the cause for the test's failure message.
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (response.headersSent) return void response.destroy();
      response.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ balancer: 'the instance failed', error: error.message, code: error.code }));
    });
    request.pipe(upstream);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

/** POSTs a form; `fields` may be a raw body string to send exactly what a test needs. */
export async function postForm(
  url: string,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const body = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
  // To a server in the test's own process, without a socket (transport.ts).
  const response = await exchange(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  return { status: response.status, headers: response.headers, body: response.text === '' ? undefined : JSON.parse(response.text) };
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
export const cliPath = join(repoRoot, 'dist/src/cli/coregate.cjs');
/** The repository root, the working directory of spawned CLI processes. */
export { repoRoot };
