/**
 * The protocol is implementable from the docs alone (docs/conformance.md, "The example core"): the
 * plain JavaScript core of examples/core-js, started as its own process, passes
 * `coregate core conformance` (every rule but the read side, which it does not serve), on the usual
 * weekend and on a Friday-Saturday one the kit learns from its refusals; and the kit is shown to
 * fail rule by rule: with one rule broken on purpose (`--break`), exactly the rules that check it
 * fail, each with the request and the answer that broke it.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { conformanceRuleIds } from '../../src/conformance/conformance-rules.js';
import { runCli } from '../helpers/cli.js';
import { repoRoot } from '../helpers/repo-root.js';
import { startExampleCore } from './example-core-process.js';

const dir = mkdtempSync(join(tmpdir(), 'coregate-example-core-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The rules each break trips, and only those. */
const expectedFailures: Record<string, { core: string; rules: string[] }> = {
  'execute-twice': { core: 'a core that executes a repeated reference again', rules: ['at-most-once.sequential', 'at-most-once.concurrent', 'fencing.after-execution'] },
  'ignore-fence': { core: 'a core that ignores a fence', rules: ['fencing.before'] },
  'refusal-family': { core: 'a core that answers a term deposit\'s refusal with the loan family\'s code', rules: ['refusals.term-deposit'] },
  'lose-event': { core: 'a core whose eventsAfter loses the event after the one asked from', rules: ['events'] },
  'round-down': { core: 'a core that truncates interest and charges instead of rounding half-up', rules: ['money.interest', 'money.loan-charges'] },
  'no-roll': { core: 'a core that does not roll a maturity past a weekend', rules: ['dates.maturity-roll'] },
};

/** Each rule's status as the kit printed it: `ok`, `FAIL` or `skip`. */
function statuses(stdout: string): Map<string, string> {
  return new Map([...stdout.matchAll(/^(ok|FAIL|skip) +([a-z.-]+)/gm)].map((match) => [match[2] ?? '', match[1] ?? '']));
}

test('examples/core-js imports only node:http and node:crypto and its own modules, nothing of coregate\'s src/', () => {
  const folder = join(repoRoot, 'examples/core-js');
  const files = readdirSync(folder).filter((file) => file.endsWith('.mjs') || file.endsWith('.js'));
  assert.deepEqual(files.sort(), ['bank.mjs', 'server.mjs']);
  let lines = 0;
  for (const file of files) {
    const source = readFileSync(join(folder, file), 'utf8');
    lines += source.split('\n').length;
    const imported = [...source.matchAll(/\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'|\bimport\s+'([^']+)'|\brequire\s*\(\s*'([^']+)'/g)].map((match) => match[1] ?? match[2] ?? match[3] ?? match[4]);
    for (const specifier of imported) {
      assert.ok(['node:http', 'node:crypto', './bank.mjs'].includes(specifier ?? ''), `${file} imports ${specifier}: the example core uses node:http and node:crypto only`);
    }
  }
  assert.ok(lines < 600, `the example core is small enough to read in one sitting: ${lines} lines`);
});

test('the example core passes coregate core conformance --advance: every rule but the read side, which it does not serve (NO_ROUTE), with a JUnit report', async () => {
  const core = await startExampleCore();
  try {
    const report = join(dir, 'example-core.xml');
    const result = await runCli(['core', 'conformance', '--core-url', core.url, '--advance', '--report', 'junit', '--out', report], { timeoutMs: 120_000 });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
    const seen = statuses(result.stdout);
    assert.deepEqual([...seen.keys()], conformanceRuleIds, 'one line per rule, in order');
    assert.deepEqual([...seen].filter(([, status]) => status !== 'ok'), [['read-side', 'skip']], result.stdout);
    assert.match(result.stdout, /^skip +read-side: the core does not serve the read side \(GET \/core\/v1\/accounts\/\{accountNumber\} answered 404 NO_ROUTE\)$/m);
    assert.match(result.stdout, new RegExp(`^${conformanceRuleIds.length - 1} passed, 0 failed, 1 skipped$`, 'm'));
    const junit = readFileSync(report, 'utf8');
    assert.match(junit, new RegExp(`<testsuites name="coregate core conformance" tests="${conformanceRuleIds.length}" failures="0" errors="0" skipped="1"`));
  } finally {
    await core.stop();
  }
});

test('a core whose weekend is Friday and Saturday: the kit learns it from the core\'s refusals, says so on its first line, and every rule passes on it (with --weekend fri,sat too, learning nothing)', async () => {
  const core = await startExampleCore({ args: ['--weekend', 'FRIDAY,SATURDAY'] });
  try {
    for (const [flags, source] of [
      [[], 'learned from the core\'s refusals'],
      [['--weekend', 'fri,sat'], '--weekend'],
    ] as const) {
      const result = await runCli(['core', 'conformance', '--core-url', core.url, '--advance', ...flags], { timeoutMs: 120_000 });
      assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
      assert.match(result.stdout, new RegExp(`^coregate core conformance: .*, weekend Friday, Saturday \\(${source.replace(/[()]/g, '\\$&')}\\)$`, 'm'), result.stdout);
      assert.deepEqual([...statuses(result.stdout)].filter(([, status]) => status !== 'ok'), [['read-side', 'skip']], result.stdout);
      // A maturity on a Friday rolls to Sunday, a business day of this core.
      assert.match(result.stdout, /^ok +dates\.maturity-roll$/m);
    }
  } finally {
    await core.stop();
  }
});

test('a core that does not serve the advance of the business date (optional): end of day is skipped with the reason, even with --advance', async () => {
  const core = await startExampleCore();
  // In front of the example core: everything passes but the advance, which is a route this core does not have.
  const front = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request as AsyncIterable<Buffer>) chunks.push(chunk);
      if (request.url === '/core/v1/business-date/advance') {
        response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'NO_ROUTE', message: 'No route' }));
        return;
      }
      const body = Buffer.concat(chunks);
      const answer = await fetch(`${core.url}${request.url ?? '/'}`, { method: request.method ?? 'GET', headers: { 'content-type': String(request.headers['content-type'] ?? 'application/json') }, ...(body.length > 0 ? { body } : {}) });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => response.destroy());
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const result = await runCli(['core', 'conformance', '--core-url', url, '--advance', '--only', 'end-of-day'], { timeoutMs: 60_000 });
    assert.equal(result.code, 0, `${result.stdout}${result.stderr}`);
    assert.match(result.stdout, /^skip +end-of-day: the core does not serve the advance of the business date \(POST \/core\/v1\/business-date\/advance answered 404 NO_ROUTE\): it is optional$/m);
  } finally {
    front.closeAllConnections();
    await new Promise((resolve) => front.close(resolve));
    await core.stop();
  }
});

describe('the kit fails rule by rule: one rule broken on purpose, exactly the rules that check it fail', () => {
  for (const [broken, { core: what, rules }] of Object.entries(expectedFailures)) {
    test(`${what} (--break ${broken}) fails exactly ${rules.join(', ')}, with the request and the answer that broke it`, async () => {
      const core = await startExampleCore({ break: broken });
      try {
        const result = await runCli(['core', 'conformance', '--core-url', core.url, '--advance'], { timeoutMs: 120_000 });
        assert.equal(result.code, 1, `exit 1 when a rule fails: ${result.stdout}${result.stderr}`);
        const failed = [...statuses(result.stdout)].filter(([, status]) => status === 'FAIL').map(([id]) => id);
        assert.deepEqual(failed, rules, result.stdout);
        assert.match(result.stdout, new RegExp(`^${conformanceRuleIds.length - rules.length - 1} passed, ${rules.length} failed, 1 skipped$`, 'm'));
        for (const rule of rules) {
          const block = new RegExp(`^FAIL +${rule.replace('.', '\\.')}: .+\\n(?: {6}.*\\n)*? {6}request: (?:GET|POST) /.+\\n {6}answer: {2}\\d{3} `, 'm');
          assert.match(result.stdout, block, `${rule}'s failure shows a request and its answer:\n${result.stdout}`);
        }
      } finally {
        await core.stop();
      }
    });
  }
});
