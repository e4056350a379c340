/**
 * docs/core-protocol.md is enough to write a core from: its generated sections (the refusals with
 * their codes per family, what a core must serve, the schemas field by field, the events' data)
 * are the code's, and what it says of the protocol's behaviour holds against the core server over
 * the reference core — the refusal names and codes the adapter accepts, the loan command's
 * maturityDate checked in the core (ML-400-013), a fenced reference's NOT_EXECUTED in the family
 * of the operation that asks, the end of day's report, the opening balances' counter-account.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyInstance } from 'fastify';
import { refusalFromWire } from '../../src/core-http/codec.js';
import { buildCoreServer } from '../../src/core-http/core-server.js';
import { openReferenceCore } from '../../src/core-http/core-service.js';
import { coreRoutes } from '../../src/core-http/core-routes.js';
import { EndOfDayReportSchema } from '../../src/core-http/protocol.js';
import { LoanInstallmentCommandSchema } from '../../src/operations/loan-installment-execution/wire.js';
import { TermDepositCommandSchema } from '../../src/operations/term-deposit-initiation/wire.js';
import { errorCatalogue, type ErrorName, type Family } from '../../src/core/error-catalogue.js';
import { coreRefusalNames } from '../../src/core/core-refusals.js';
import { createLogger } from '../../src/log.js';
import type { Store } from '../../src/store/connect.js';
import { renderSections, sectionsOf } from '../../scripts/core-protocol-doc.js';
import { demoDataFile } from '../helpers/server.js';
import { repoRoot } from '../helpers/repo-root.js';
import { storeTargets } from '../helpers/stores.js';

const page = readFileSync(join(repoRoot, 'docs/core-protocol.md'), 'utf8');
const regenerate = 'run: node --import tsx scripts/core-protocol-doc.ts';

/** The rows of the page's refusal tables: name and its code per family (undefined: not in that family). */
function refusalRows(): Array<{ name: string; TD: string | undefined; ML: string | undefined; status: number }> {
  const section = sectionsOf(page).refusals ?? '';
  return [...section.matchAll(/^\| `([A-Za-z]+)` \| (`[A-Z]{2}-\d{3}-\d{3}`|—) \| (`[A-Z]{2}-\d{3}-\d{3}`|—) \| (\d{3}) \|/gm)].map((match) => ({
    name: match[1] ?? '',
    TD: match[2] === '—' ? undefined : match[2]?.slice(1, -1),
    ML: match[3] === '—' ? undefined : match[3]?.slice(1, -1),
    status: Number(match[4]),
  }));
}

/** The JSON blocks of the page that parse. */
function jsonBlocks(): unknown[] {
  return [...page.matchAll(/```json\n([\s\S]*?)```/g)].flatMap((match) => {
    try {
      return [JSON.parse(match[1] ?? '')];
    } catch {
      return [];
    }
  });
}

test('docs/core-protocol.md\'s generated sections (refusals, what a core must serve, schemas, events\' data) are the code\'s', () => {
  const onPage = sectionsOf(page);
  for (const [name, rendered] of Object.entries(renderSections())) {
    assert.ok(onPage[name] !== undefined, `docs/core-protocol.md has the generated section ${name}`);
    assert.equal(onPage[name], rendered, `the section ${name} of docs/core-protocol.md differs from the code: ${regenerate}`);
  }
});

test('the page lists every refusal name of the catalogue once; the adapter accepts each name a core may send with the code the page gives in its family, in no other family, and settles the API\'s own names as unrecognised', () => {
  const rows = refusalRows();
  assert.deepEqual(rows.map((row) => row.name).sort(), Object.keys(errorCatalogue).sort());
  const unrecognised = errorCatalogue.unrecognisedCoreRefusal;
  for (const row of rows) {
    const entry = errorCatalogue[row.name as keyof typeof errorCatalogue];
    assert.equal(row.status, entry.status, row.name);
    for (const family of ['TD', 'ML'] as Family[]) {
      const code = row[family];
      if (code !== undefined && coreRefusalNames.has(row.name as ErrorName)) {
        assert.equal(refusalFromWire({ name: row.name, code, message: 'm' }, family).entry, entry, `${row.name} ${code} is read as its entry in ${family}`);
        continue;
      }
      // A name of the other family, or one of the API's own answers: never read as that entry,
      // settled as the core's unrecognised refusal instead.
      const ownCode = code ?? row.TD ?? row.ML ?? '';
      const read = refusalFromWire({ name: row.name, code: ownCode, message: 'm' }, family).entry;
      if (entry !== unrecognised) assert.notEqual(read, entry, `${row.name} is not a ${family} refusal a core may send`);
      assert.equal(read, unrecognised, `${row.name} in ${family} is settled as ${unrecognised.reason}`);
    }
  }
});

test('the page\'s command examples are valid commands of the protocol, and the loan command shows its maturityDate', () => {
  const blocks = jsonBlocks() as Array<Record<string, unknown>>;
  const deposit = blocks.find((block) => 'principalMinor' in block && 'customerReference' in block && !('contractNumber' in block));
  const loan = blocks.find((block) => 'loanId' in block && 'paymentAccount' in block && !('operationId' in block));
  assert.ok(TypeCompiler.Compile(TermDepositCommandSchema).Check(deposit), JSON.stringify(deposit));
  assert.ok(TypeCompiler.Compile(LoanInstallmentCommandSchema).Check(loan), JSON.stringify(loan));
  assert.equal(loan?.maturityDate, '2026-12-31');
  const report = blocks.find((block) => 'daysClosed' in block);
  assert.ok(TypeCompiler.Compile(EndOfDayReportSchema).Check(report), JSON.stringify(report));
});

test('the page names every route of the core server in what a core must serve, the read and load sides optional', () => {
  const section = sectionsOf(page)['core-serves'] ?? '';
  for (const row of coreRoutes) {
    const line = section.split('\n').find((candidate) => candidate.includes(`\`${row.method} ${row.path.replace(/:([A-Za-z]+)/g, '{$1}')}\``));
    assert.ok(line, `${row.method} ${row.path} is listed`);
    assert.match(line, row.side === undefined ? /\*\*required\*\*|\| optional \|/ : new RegExp(`optional \\(${row.side === 'records' ? 'read' : 'load'} side\\)`));
  }
});

describe('what the page says of the core server over the reference core holds', () => {
  const silent = createLogger({ level: 'silent' });
  const sqlite = storeTargets.find((target) => target.name === 'sqlite');
  let app: FastifyInstance;
  let store: Store;
  let drop: () => Promise<void> = async () => {};
  const post = (url: string, body: unknown) => app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });

  before(async () => {
    if (!sqlite) throw new Error('no SQLite target');
    const created = await sqlite.create();
    drop = created.drop;
    const opened = await openReferenceCore({ db: created.url, dataFile: demoDataFile, businessDate: undefined }, silent);
    store = opened.store;
    app = await buildCoreServer({ core: opened.core, logger: silent, version: 'test' });
  });
  after(async () => {
    await app?.close();
    await store?.close();
    await drop();
  });

  test('a loan command\'s maturityDate after the facility\'s final maturity is refused in the core: maturityAfterFinalMaturity, ML-400-013', async () => {
    const answer = await post(`/core/v1/loan-installment-executions/${randomUUID()}`, {
      loanId: '7000000001',
      sequence: 1,
      loanType: 'CRDE',
      parameterType: 'DocumentaryRemittance',
      maturityDate: '2027-01-29',
      paymentAccount: '1000000001',
      expenseAccount: '1000000002',
    });
    assert.equal(answer.statusCode, 200);
    assert.equal(answer.json().status, 'Rejected');
    assert.deepEqual([answer.json().refusal.name, answer.json().refusal.code], ['maturityAfterFinalMaturity', 'ML-400-013']);
  });

  test('a fenced reference answers notExecuted in the family of the operation that asks: TD-502-002 as a term deposit, ML-502-002 as a loan installment', async () => {
    for (const [path, code] of [
      ['term-deposit-constitutions', 'TD-502-002'],
      ['loan-installment-executions', 'ML-502-002'],
    ] as const) {
      const reference = randomUUID();
      assert.equal((await post(`/core/v1/fences/${reference}`, {})).statusCode, 200);
      const lookup = (await app.inject({ method: 'GET', url: `/core/v1/${path}/${reference}` })).json();
      assert.deepEqual([lookup.status, lookup.refusal.name, lookup.refusal.code], ['Rejected', 'notExecuted', code]);
    }
  });

  test('the reference core opens each account\'s balance against EQUITY-<currency>: a balanced opening_balance movement, reference opening-<account>', async () => {
    const postings = (await app.inject({ method: 'GET', url: '/core/v1/accounts/1000000001/postings?limit=500' })).json().postings as Array<Record<string, string>>;
    const opening = postings.at(-1);
    assert.deepEqual([opening?.reference, opening?.kind, opening?.amountMinor], ['opening-1000000001', 'opening_balance', '25000000']);
    const equity = (await app.inject({ method: 'GET', url: '/core/v1/accounts/EQUITY-USD/postings?limit=500' })).json().postings as Array<Record<string, string>>;
    const counter = equity.find((posting) => posting.reference === 'opening-1000000001');
    assert.deepEqual([counter?.movementId, counter?.amountMinor], [opening?.movementId, '-25000000']);
    const ledger = (await app.inject({ method: 'GET', url: '/core/v1/ledger-check' })).json();
    assert.deepEqual(ledger.unbalancedMovements, []);
  });

  test('an EndOfDayReport counts what its own call did: the same advance asked again answers no days and zero counts', async () => {
    const first = (await post('/core/v1/business-date/advance', { to: '2026-03-04' })).json();
    assert.deepEqual(first, { from: '2026-03-02', to: '2026-03-04', daysClosed: ['2026-03-02', '2026-03-03'], maturedDeposits: 0, overdueInstallments: 0 });
    const again = (await post('/core/v1/business-date/advance', { to: '2026-03-04' })).json();
    assert.deepEqual(again, { from: '2026-03-04', to: '2026-03-04', daysClosed: [], maturedDeposits: 0, overdueInstallments: 0 });
  });
});
