/**
 * `coregate core conformance`'s usage and setup (docs/conformance.md): bad input — no URL, an
 * unreachable one, a core that answers HTML or compressed JSON, a fixture file that names an
 * account the core does not hold, a file that does not exist or lacks a field, a report without
 * its file, a weekend of no weekdays — is one line and exit 2, never a stack trace; a core without
 * the load side needs a fixture file, and runs on it; and the same kit as a library function for an
 * in-process adapter (`runCoreConformance`, exported from the package's main entry).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { buildCoreServer } from '../../src/core-http/core-server.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import type { CoreBankingPort } from '../../src/core/port.js';
import { ConformanceSetupError, conformanceRuleIds, runCoreConformance, type RuleResult } from '../../src/index.js';
import type { ConformanceStart } from '../../src/conformance/run-core-conformance.js';
import { createLogger } from '../../src/log.js';
import { runCli, type CliResult } from '../helpers/cli.js';
import { startTestCoreServer, type TestCoreServer } from '../helpers/core-server.js';
import { freePort } from '../helpers/processes.js';
import { demoDataFile } from '../helpers/server.js';
import { repoRoot } from '../helpers/repo-root.js';
import { storeTargets } from '../helpers/stores.js';

const sqlite = storeTargets.find((target) => target.name === 'sqlite');
/** A store of the sqlite target (the describe below is skipped without one). */
const newStore = () => {
  if (!sqlite) throw new Error('no sqlite store target');
  return sqlite.create();
};
const demoFixtures = join(repoRoot, 'examples/conformance-fixtures.json');
const dir = mkdtempSync(join(tmpdir(), 'coregate-conformance-setup-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A usage error: exit 2, nothing on stdout, one line on stderr, no stack trace. */
function refused(result: CliResult, message: RegExp): void {
  assert.equal(result.code, 2, `${result.stdout}${result.stderr}`);
  assert.equal(result.stdout, '');
  assert.equal(result.stderr.trimEnd().split('\n').length, 1, `one line: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /^\s+at /m, 'no stack trace');
  assert.match(result.stderr, message);
}

/** The port's methods alone: a core that serves neither the read side nor the load side. */
function operationsOnly(core: CoreBankingPort): CoreBankingPort {
  const methods = ['constituteTermDeposit', 'findTermDepositConstitution', 'executeLoanInstallment', 'findLoanInstallmentExecution', 'fenceOperation', 'retrieveTermDeposit', 'userStatus', 'workstationStatus', 'ping', 'businessDate', 'advanceBusinessDate', 'eventsAfter'] as const;
  return Object.fromEntries(methods.map((method) => [method, (core[method] as (...args: unknown[]) => unknown).bind(core)])) as unknown as CoreBankingPort;
}

test('without --core-url (nor COREGATE_CORE_URL): exit 2 naming the flag', async () => {
  refused(await runCli(['core', 'conformance'], { env: {} }), /^coregate: --core-url is required: the base URL of the core to check/);
});

test('an unreachable URL: exit 2, "cannot reach the core" with the reason, never a stack trace', async () => {
  const port = await freePort();
  refused(await runCli(['core', 'conformance', '--core-url', `http://127.0.0.1:${port}`]), new RegExp(`^coregate: cannot reach the core at http://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED`));
});

test('a URL that answers HTML (a web page, not the protocol): exit 2 saying what --core-url must name', async () => {
  const page: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end('<html><body>Welcome</body></html>');
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
    refused(await runCli(['core', 'conformance', '--core-url', url]), /answered GET \/health\/ready with 200 text\/html, not the protocol's JSON: --core-url must name a core that speaks the remote core protocol/);
  } finally {
    page.closeAllConnections();
    await new Promise((resolve) => page.close(resolve));
  }
});

test('a core that answers compressed JSON (Content-Encoding gzip), which coregate\'s adapter does not read: exit 2 saying the adapter reads plain UTF-8 JSON', async () => {
  const compressed: Server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    response.end(gzipSync(JSON.stringify({ status: 'ready' })));
  });
  await new Promise<void>((resolve) => compressed.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(compressed.address() as AddressInfo).port}`;
    refused(
      await runCli(['core', 'conformance', '--core-url', url]),
      /^coregate: the core at http:\/\/127\.0\.0\.1:\d+ answered 200 \(Content-Encoding gzip\) with an answer that is not UTF-8 to GET \/health\/ready: coregate's adapter reads plain UTF-8 JSON, uncompressed/,
    );
  } finally {
    compressed.closeAllConnections();
    await new Promise((resolve) => compressed.close(resolve));
  }
});

test('a report without its file, an unknown format, an unknown rule, a bad time-out, a weekend of no weekdays: exit 2 each', async () => {
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--report', 'junit']), /--report and --out go together/);
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--report', 'xml', '--out', join(dir, 'x')]), /--report must be junit or tap, got "xml"/);
  refused(await runCli(['core', 'conformance', '--core-url', 'ftp://core.internal']), /--core-url must be http:\/\/ or https:\/\//);
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--timeout-ms', 'soon']), /--timeout-ms must be a positive integer/);
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--weekend', 'sat,funday']), /--weekend must name the core's weekend days, e\.g\. sat,sun or fri,sat \(or none\), got "sat,funday"/);
});

test('a fixture file that does not exist, is not JSON, or lacks a field: exit 2 naming the file and the field', async () => {
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--fixtures', join(dir, 'none.json')]), /fixture file .*none\.json does not exist/);
  const broken = join(dir, 'broken.json');
  writeFileSync(broken, '{"customer": ');
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--fixtures', broken]), /fixture file .*broken\.json is not JSON/);
  const partial = join(dir, 'partial.json');
  writeFileSync(partial, JSON.stringify({ customer: 'C0001' }));
  refused(await runCli(['core', 'conformance', '--core-url', 'http://127.0.0.1:1', '--fixtures', partial]), /fixture file .*partial\.json: accounts: Expected required property/);
});

describe('against a core server [sqlite]', { skip: sqlite?.skip }, () => {
  let server: TestCoreServer | undefined;
  let operations: Awaited<ReturnType<typeof buildCoreServer>> | undefined;
  let operationsUrl = '';
  let drop: (() => Promise<void>) | undefined;
  before(async () => {
    const created = await newStore();
    drop = created.drop;
    server = await startTestCoreServer({ db: created.url, data: demoDataFile });
    operations = await buildCoreServer({ core: operationsOnly(server.service.core), logger: createLogger({ level: 'silent' }), version: 'test' });
    await operations.listen({ port: 0, host: '127.0.0.1' });
    operationsUrl = `http://127.0.0.1:${(operations.server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await operations?.close();
    await server?.close();
    await drop?.();
  });

  test('a fixture file that names an account the core does not hold: exit 2 naming the field and the account', async () => {
    const fixtures = JSON.parse(readFileSync(demoFixtures, 'utf8')) as { accounts: Record<string, unknown> };
    fixtures.accounts.blocked = '1999999999';
    const file = join(dir, 'missing-account.json');
    writeFileSync(file, JSON.stringify(fixtures));
    refused(
      await runCli(['core', 'conformance', '--core-url', server?.url ?? '', '--fixtures', file]),
      /^coregate: fixture file .*missing-account\.json: accounts\.blocked names account 1999999999, which the core does not hold/,
    );
  });

  test('a core without the load side: exit 2 asking for --fixtures; with them the kit runs, the read side and the load side skipped with the reason', async () => {
    refused(await runCli(['core', 'conformance', '--core-url', operationsUrl]), /the core does not serve the load side \(POST \/core\/v1\/data answered 404 NO_ROUTE\), so the kit cannot load its own records: give --fixtures FILE/);
    const result = await runCli(['core', 'conformance', '--core-url', operationsUrl, '--fixtures', demoFixtures], { timeoutMs: 120_000 });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /^skip +read-side: the core does not serve the read side/m);
    assert.match(result.stdout, /^skip +load-side: /m);
    assert.match(result.stdout, /^ok +at-most-once\.sequential \(.*not verified \(the core serves no read side/m, 'what the kit could not prove is said beside the rule');
    assert.doesNotMatch(result.stdout, /^FAIL/m);
  });

  test('the library: runCoreConformance(port, options) from the package\'s main entry runs the rules on an in-process adapter, telling each result as it ends', async () => {
    const created = await newStore();
    const { store, core } = await openReferenceCore({ db: created.url, dataFile: demoDataFile, businessDate: undefined }, createLogger({ level: 'silent' }));
    try {
      const told: RuleResult[] = [];
      const started: ConformanceStart[] = [];
      const only = ['business-date', 'at-most-once.sequential', 'failures.malformed-command'];
      const report = await runCoreConformance(core, { only, onReady: (start) => started.push(start), onResult: (result) => told.push(result) });
      // What the run stands on, told once before the first rule: the reference core's weekend learned from its refusals, no event before the kit's.
      assert.equal(started.length, 1);
      assert.deepEqual({ ...started[0], customer: undefined }, {
        businessDate: '2026-03-02',
        valueDate: '2026-03-02',
        fixtures: 'loaded',
        customer: undefined,
        weekend: 'weekend Saturday, Sunday (learned from the core\'s refusals)',
        eventsFrom: 0,
      });
      assert.match(started[0]?.customer ?? '', /^CK-[A-Z2-7]{8}-C$/);
      assert.deepEqual(told.map((result) => [result.id, result.status]), [
        ['business-date', 'passed'],
        ['at-most-once.sequential', 'passed'],
        ['failures.malformed-command', 'skipped'],
      ]);
      assert.deepEqual(report.results, told);
      assert.deepEqual([report.passed, report.failed, report.skipped, report.fixtures, report.businessDate], [2, 0, 1, 'loaded', '2026-03-02']);
      // 20 rules: the readiness probe is the kit's first step, before any rule (a core that does not answer it stops the kit, below).
      assert.ok(conformanceRuleIds.length === 20 && only.every((id) => conformanceRuleIds.includes(id)));
    } finally {
      await store.close();
      await created.drop();
    }
  });
});

test('the library: a core that does not answer stops the kit before any rule with a ConformanceSetupError saying so', async () => {
  const silent = { ping: () => Promise.reject(new Error('connection refused')) } as unknown as CoreBankingPort;
  await assert.rejects(runCoreConformance(silent), (error: unknown) => {
    assert.ok(error instanceof ConformanceSetupError, String(error));
    assert.match(error.message, /^the core does not answer its readiness probe \(GET \/health\/ready\): Error: connection refused$/);
    return true;
  });
});
