/**
 * Renders the remote core protocol's reference from the code, as scripts/errors-doc.ts renders
 * docs/errors.md:
 * - docs/core-protocol.openapi.json: the OpenAPI 3.1 document `coregate core serve` serves at
 *   GET /openapi.json (the core server built in-process over the reference core);
 * - the generated sections of docs/core-protocol.md, each between `<!-- generated: NAME -->` and
 *   `<!-- end generated: NAME -->`: the refusals (from the error catalogue), what a core must serve
 *   (from the server's route table), the schemas field by field (from src/core-http/protocol.ts)
 *   and the events' data (from the end of day's own functions).
 *
 *   node --import tsx scripts/core-protocol-doc.ts
 *
 * writes both; test/core-http/protocol-document.test.ts and test/docs/core-protocol-doc.test.ts
 * fail when either differs from the code.
 */
import type { TSchema } from '@sinclair/typebox';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { coreRoutes } from '../src/core-http/core-routes.js';
import { buildCoreServer } from '../src/core-http/core-server.js';
import { openReferenceCore } from '../src/core-http/core-service.js';
import { ReadySchema, UnavailableSchema, paths } from '../src/core-http/protocol.js';
import { withNamedSchemas } from '../src/core-http/protocol-document.js';
import { errorCatalogue, errorCode, type ErrorEntry, type ErrorName } from '../src/core/error-catalogue.js';
import { coreRefusalNames } from '../src/core/core-refusals.js';
import { maturityEventData } from '../src/core/end-of-day/maturity.js';
import { overdueEventData } from '../src/core/end-of-day/overdue.js';
import { createLogger } from '../src/log.js';
import { version } from '../src/version.js';

/** The repository's root: the nearest directory above this module with coregate's package.json (it runs from scripts/ and, compiled, from dist/scripts/). */
function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'coregate') return dir;
    if (dirname(dir) === dir) throw new Error(`no coregate package.json above ${from}`);
  }
}

const root = findRoot(dirname(fileURLToPath(import.meta.url)));
export const protocolMarkdownPath = join(root, 'docs/core-protocol.md');
export const protocolOpenApiPath = join(root, 'docs/core-protocol.openapi.json');

// ----- The OpenAPI document -----

/** GET /openapi.json of the core server over the reference core (every side served), on a store in memory. */
export async function servedProtocolDocument(): Promise<unknown> {
  const silent = createLogger({ level: 'silent' });
  const { store, core } = await openReferenceCore({ db: 'sqlite::memory:', dataFile: undefined, businessDate: '2026-03-02' }, silent);
  try {
    const app = await buildCoreServer({ core, logger: silent, version });
    try {
      return (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
    } finally {
      await app.close();
    }
  } finally {
    await store.close();
  }
}

export function openApiText(document: unknown): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}

// ----- Generated sections of the markdown -----

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Schema = { [key: string]: Json };

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

/**
 * The refusals the reference core's rules decide: the catalogue entries its rule modules refuse
 * with (`refuse(E.name, ...)`), and the fence's notExecuted. Read from the modules themselves, so
 * that a rule added there moves its entry into the first table.
 */
function decidedByTheCore(): Set<string> {
  const names = new Set<string>();
  for (const file of ['src/core/term-deposits/constitution-rules.ts', 'src/core/loans/installment-rules.ts']) {
    for (const match of readFileSync(join(root, file), 'utf8').matchAll(/\bE\.([A-Za-z]+)\b/g)) names.add(match[1] ?? '');
  }
  for (const match of readFileSync(join(root, 'src/reference-core/reference-core.ts'), 'utf8').matchAll(/refusalName: '([A-Za-z]+)'/g)) names.add(match[1] ?? '');
  for (const name of names) if (!(name in errorCatalogue)) throw new Error(`${name} is refused by the reference core but is not in the error catalogue`);
  return names;
}

function refusalRows(names: ErrorName[]): string[] {
  const code = (entry: ErrorEntry, family: 'TD' | 'ML') => (entry.family === 'both' || entry.family === family ? `\`${errorCode(entry, family)}\`` : '—');
  return [
    '| `name` | TD | ML | HTTP | `reason` | Meaning |',
    '|---|---|---|---|---|---|',
    ...names.map((name) => {
      const entry: ErrorEntry = errorCatalogue[name];
      return `| \`${name}\` | ${code(entry, 'TD')} | ${code(entry, 'ML')} | ${entry.status} | \`${entry.reason}\` | ${cell(entry.description)} |`;
    }),
  ];
}

export function renderRefusals(): string {
  const decided = decidedByTheCore();
  // The names a core may send (src/core/core-refusals.ts): what the rules decide, and rejectedByCore.
  const mayRefuse = new Set<string>([...decided, 'rejectedByCore']);
  const listed = [...coreRefusalNames].sort();
  if (listed.join() !== [...mayRefuse].sort().join()) throw new Error(`src/core/core-refusals.ts lists ${listed.join(', ')}; the reference core's rules refuse with ${[...mayRefuse].sort().join(', ')}: make them agree`);
  const all = (Object.keys(errorCatalogue) as ErrorName[]).sort((a, b) => {
    const [x, y] = [errorCatalogue[a] as ErrorEntry, errorCatalogue[b] as ErrorEntry];
    return x.status - y.status || x.number - y.number || (a < b ? -1 : 1);
  });
  return [
    'The refusals a core decides: the rules that need the core\'s records, the fence, and `rejectedByCore` for a refusal the core',
    'gives no rule for. The reference core refuses with exactly these (read from its rule modules,',
    '`src/core/term-deposits/constitution-rules.ts` and `src/core/loans/installment-rules.ts`, and its fence); the adapter takes',
    'exactly these (`src/core/core-refusals.ts`).',
    '',
    ...refusalRows(all.filter((name) => coreRefusalNames.has(name))),
    '',
    'The other names of the catalogue are what the API answers on its own (a malformed request, a token, a duplicate, its own',
    'failures). A core that sends one of them as its refusal answers outside the protocol: the adapter settles the operation as',
    'rejected with `unrecognisedCoreRefusal` (`REJECTED_BY_CORE`, below: "What the API\'s adapter makes of it"), never as the',
    'API\'s own answer.',
    '',
    ...refusalRows(all.filter((name) => !coreRefusalNames.has(name))),
  ].join('\n');
}

/**
 * What a core must serve, by port method, and what the API does when the core lacks it: an
 * operation's two endpoints say it themselves (their folder's wire.ts, on the route's row).
 */
const withoutIt: Record<string, string> = {
  fenceOperation: 'the reconciler cannot close an unknown outcome nobody repeated: it stays unknown, tried again with a growing pause',
  retrieveTermDeposit: '`GET /v1/term-deposits/{id}/retrieve` answers 502',
  userStatus: 'a business call whose token names a user (`backbone_user`) answers 502',
  workstationStatus: 'a business call whose token names a workstation answers 502',
  businessDate: 'the operator API\'s business date (and the console\'s) answers 502 and `coregate core date --core-url` fails; the API\'s `/openapi.json` keeps its last date for its examples',
  advanceBusinessDate: 'the operator API\'s advance answers 502 and `coregate core advance --core-url` fails: the API never advances on its own, so a core that runs its own end of day needs it not',
  eventsAfter: 'no webhook for a maturity or an overdue installment: the relay fails every pass (logged once until it works again)',
  ping: 'the API\'s `/health/ready` answers 503 naming the core',
  listCustomers: 'the operator views of customers (console, `/operator/v1/customers`) answer 501; `coregate customers list --core-url` fails',
  listUsers: '`coregate users list --core-url` fails (a user\'s own status is `GET .../directory/users/{login}`, required)',
  listWorkstations: '`coregate workstations list --core-url` fails',
  listAccounts: 'the operator views of accounts answer 501; `coregate accounts list --core-url` fails',
  findAccount: 'the operator view of an account answers 501; `coregate accounts show --core-url` fails',
  listPostings: 'the operator view of an account\'s postings and balance history answers 501',
  listTermDeposits: 'the operator views of term deposits answer 501; `coregate term-deposits show --core-url` fails',
  listLoanFacilities: 'the operator views of facilities answer 501; `coregate facilities show --core-url` fails',
  checkLedger: '`coregate check --core-url` cannot prove the ledger: it fails, naming the side',
  postedReferences: '`coregate check --core-url` cannot prove that executed operations have postings: it fails, naming the side',
  loadData: '`coregate serve --core-url URL --data FILE` refuses to start when the file has a core part (and says where those records belong); the operator API\'s sandbox reset answers 409; `coregate customers add` (and `accounts`, `users`, `workstations add`) `--core-url` fail',
};

/** Operations a core may leave out although they belong to no optional side. */
const optionalOperations = new Set(['advanceBusinessDate']);

export function renderServedEndpoints(): string {
  const template = (path: string) => path.replace(/:([A-Za-z]+)/g, '{$1}');
  const rows = [
    ...coreRoutes.map((row) => ({ method: row.method, path: template(row.path), portMethod: row.portMethod, side: row.side, withoutIt: row.withoutIt })),
    { method: 'GET', path: paths.ready, portMethod: 'ping', side: undefined, withoutIt: undefined },
  ];
  const need = (row: (typeof rows)[number]) =>
    row.side === 'records' ? 'optional (read side)' : row.side === 'data' ? 'optional (load side)' : optionalOperations.has(row.portMethod) ? 'optional' : '**required**';
  return [
    '| Endpoint | Port method | A core | Without it, the API |',
    '|---|---|---|---|',
    ...rows.map((row) => {
      const text = row.withoutIt ?? withoutIt[row.portMethod];
      if (text === undefined) throw new Error(`scripts/core-protocol-doc.ts: say what the API does without ${row.portMethod} (withoutIt)`);
      return `| \`${row.method} ${row.path}\` | \`${row.portMethod}\` | ${need(row)} | ${cell(text)} |`;
    }),
  ].join('\n');
}

/** The answers every operation shares: listed after the operations' own schemas. */
const sharedAnswers = ['Rejected', 'Refusal', 'NotFound', 'Fenced', 'DirectoryEntry'];

/** The titles of the titled schemas inside `schema`, itself first, depth first, each once. */
function titlesIn(schema: unknown, titles: string[] = []): string[] {
  if (Array.isArray(schema)) schema.forEach((item) => titlesIn(item, titles));
  else if (typeof schema === 'object' && schema !== null) {
    const title = (schema as { title?: unknown }).title;
    if (typeof title === 'string' && !titles.includes(title)) titles.push(title);
    Object.values(schema).forEach((value) => titlesIn(value, titles));
  }
  return titles;
}

/**
 * Each operation's commands, then its outcomes with what they hold, in the registry's order (the
 * operations' rows of the route table: their folders' wire.ts).
 */
function operationSchemaTitles(): string[] {
  const executions = coreRoutes.filter((row) => row.operation !== undefined && row.method === 'POST');
  const commands = executions.flatMap((row) => (row.body ? titlesIn(row.body).slice(0, 1) : []));
  const outcomes = executions.flatMap((row) => titlesIn(row.response[200]));
  return [...new Set([...commands, ...outcomes])].filter((title) => !sharedAnswers.includes(title));
}

/** The named schemas of the protocol, as the document holds them, grouped for the page. */
const schemaGroups: Array<{ title: string; names: string[] }> = [
  { title: 'Commands and outcomes', names: [...operationSchemaTitles(), ...sharedAnswers] },
  { title: 'Business days and events', names: ['BusinessDate', 'BusinessDateAdvance', 'EndOfDayReport', 'BusinessDateBackwards', 'CoreEvents', 'CoreEvent'] },
  {
    title: 'The read side',
    names: [
      'CustomersPage',
      'Customer',
      'UsersPage',
      'User',
      'WorkstationsPage',
      'Workstation',
      'AccountsPage',
      'Account',
      'PostingsPage',
      'Posting',
      'TermDepositsPage',
      'TermDepositRecord',
      'LoanFacilitiesPage',
      'LoanFacility',
      'Installment',
      'LedgerReport',
      'UnbalancedMovement',
      'BalanceMismatch',
      'NegativeCustomerAccount',
      'TermDepositMismatch',
      'PostedReferencesQuestion',
      'PostedReferences',
    ],
  },
  { title: 'The load side', names: ['CoreData', 'CoreLoadSummary', 'DataRefused'] },
  { title: 'Other answers', names: ['Problem', 'Ready', 'Unavailable'] },
];

/** Every schema a route of the core server takes or answers (as core-server.ts documents them). */
export function protocolComponents(): Record<string, Schema> {
  const schemas: TSchema[] = [ReadySchema, UnavailableSchema, ...coreRoutes.flatMap((row) => [...(row.body ? [row.body] : []), ...Object.values(row.response)])];
  return (withNamedSchemas({}, schemas) as { components: { schemas: Record<string, Schema> } }).components.schemas;
}

const anchor = (name: string) => `[${name}](#${name.toLowerCase()})`;

function typeOf(schema: Schema): string {
  if (typeof schema.$ref === 'string') return anchor(schema.$ref.replace('#/components/schemas/', ''));
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(typeOf).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items as Schema)}`;
  if (schema.type === 'object') return 'object';
  return String(schema.type);
}

/** What a schema bounds (pattern, length, range, items), in words. */
function bounds(schema: Schema): string[] {
  const notes: string[] = [];
  if (typeof schema.pattern === 'string') notes.push(`pattern \`${schema.pattern}\``);
  if (typeof schema.maxLength === 'number') notes.push(typeof schema.minLength === 'number' && schema.minLength > 0 ? `${schema.minLength}–${schema.maxLength} characters` : `at most ${schema.maxLength} characters`);
  if (typeof schema.minimum === 'number' && typeof schema.maximum === 'number') notes.push(`${schema.minimum} to ${schema.maximum}`);
  else if (typeof schema.minimum === 'number') notes.push(`≥ ${schema.minimum}`);
  if (typeof schema.maxItems === 'number') notes.push(`at most ${schema.maxItems} items`);
  if (Array.isArray(schema.anyOf)) for (const part of schema.anyOf as Schema[]) notes.push(...bounds(part).map((note) => `${typeOf(part)}: ${note}`));
  return notes;
}

/** The description, and what the schema bounds. */
function described(schema: Schema): string {
  const text = typeof schema.description === 'string' ? schema.description : schema.const !== undefined ? 'Always this value' : '';
  const notes = bounds(schema);
  return cell([text, notes.length > 0 ? `(${notes.join('; ')})` : ''].filter((part) => part !== '').join(' '));
}

function fieldTable(schema: Schema): string[] {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  return [
    '| Field | Type | | Description |',
    '|---|---|---|---|',
    ...Object.entries(properties).map(([field, property]) => `| \`${field}\` | ${typeOf(property)} | ${required.has(field) ? 'required' : 'optional'} | ${described(property)} |`),
  ];
}

function renderSchema(name: string, schema: Schema): string[] {
  const lines = [`#### ${name}`, ''];
  if (typeof schema.description === 'string') lines.push(cell(schema.description), '');
  if (Array.isArray(schema.anyOf)) return [...lines, `One of ${(schema.anyOf as Schema[]).map(typeOf).join(', ')}.`, ''];
  if (Array.isArray(schema.allOf)) {
    const [base, ...rest] = schema.allOf as Schema[];
    return [...lines, `Every field of ${typeOf(base ?? {})}, and:`, '', ...rest.flatMap(fieldTable), ''];
  }
  if (schema.properties === undefined) return [...lines, 'A JSON object; its members are described above.', ''];
  return [...lines, ...fieldTable(schema), ''];
}

export function renderSchemas(): string {
  const components = protocolComponents();
  const placed = new Set(schemaGroups.flatMap((group) => group.names));
  const unplaced = Object.keys(components).filter((name) => !placed.has(name));
  if (unplaced.length > 0) throw new Error(`scripts/core-protocol-doc.ts: place ${unplaced.join(', ')} in schemaGroups`);
  const lines: string[] = [];
  for (const group of schemaGroups) {
    lines.push(`### ${group.title}`, '');
    for (const name of group.names) {
      const schema = components[name];
      if (schema === undefined) throw new Error(`scripts/core-protocol-doc.ts: ${name} is no longer a schema of the protocol`);
      lines.push(...renderSchema(name, schema));
    }
  }
  return lines.join('\n').trimEnd();
}

/** What each field of an event's data means, by event type (the end of day's own functions make the data). */
const eventFieldMeanings: Record<string, Record<string, string>> = {
  'termDeposit.matured': {
    contractNumber: 'The contract that matured',
    customerReference: 'Its customer',
    maturityDate: 'Its maturity date',
    repaidOn: 'The business day whose end of day repaid it: the maturity date, or a later business day when the maturity date had no end of day (a holiday added since)',
    principal: 'The principal repaid to the source account',
    interest: 'The interest paid to the interest settlement account (the retrieve\'s expected interest)',
    sourceAccount: 'The account the principal went back to',
    interestAccount: 'The account the interest went to',
    status: 'Always `Matured`',
  },
  'loanInstallment.overdue': {
    loanId: 'The facility',
    sequence: 'The installment',
    dueDate: 'Its due date',
    overdueOn: 'The business day whose end of day found it unpaid',
    amount: 'The amount due',
    paid: 'What was paid of it',
    outstanding: 'What is left: amount − paid',
    status: 'Always `Overdue`',
  },
};

export function renderEventData(): string {
  const examples: Record<string, Record<string, unknown>> = {
    'termDeposit.matured': maturityEventData(
      {
        contractNumber: 'TD036471208246173',
        customerReference: 'C0001',
        productCode: 'TDFIX',
        componentCode: 'TD30-365',
        principalMinor: 1_000_000n,
        currency: 'USD',
        ratePercent: '5.25',
        dayCount: 'ACT/360',
        valueDate: '2026-03-02',
        maturityDate: '2026-06-01',
        numberOfDays: 91,
        sourceAccount: '1000000001',
        interestAccount: '1000000002',
        description: null,
        operationReference: '9eca89c4-2ef9-4ac5-b92b-3dbe3d0a4594',
        status: 'Active',
      },
      { principalMinor: 1_000_000n, interestMinor: 13_271n, lines: [] },
      '2026-06-01',
    ),
    'loanInstallment.overdue': overdueEventData({ loanId: '7000000001', sequence: 1, dueDate: '2026-03-31', amountMinor: 2_000_000n, paidMinor: 500_000n }, 'USD', '2026-03-31'),
  };
  const lines: string[] = [];
  for (const [type, data] of Object.entries(examples)) {
    const meanings = eventFieldMeanings[type] ?? {};
    lines.push(`\`${type}\`:`, '', '| `data` field | Example | Meaning |', '|---|---|---|');
    for (const [field, value] of Object.entries(data)) {
      const meaning = meanings[field];
      if (meaning === undefined) throw new Error(`scripts/core-protocol-doc.ts: say what ${type}'s data field ${field} means (eventFieldMeanings)`);
      lines.push(`| \`${field}\` | \`${cell(JSON.stringify(value))}\` | ${cell(meaning)} |`);
    }
    const gone = Object.keys(meanings).filter((field) => !(field in data));
    if (gone.length > 0) throw new Error(`scripts/core-protocol-doc.ts: ${type}'s data has no ${gone.join(', ')} any more (eventFieldMeanings)`);
    lines.push('');
  }
  return lines.join('\n').trimEnd();
}

export function renderSections(): Record<string, string> {
  return { refusals: renderRefusals(), 'core-serves': renderServedEndpoints(), schemas: renderSchemas(), 'event-data': renderEventData() };
}

const begin = (name: string) => `<!-- generated: ${name} (node --import tsx scripts/core-protocol-doc.ts) -->`;
const end = (name: string) => `<!-- end generated: ${name} -->`;

/** The generated sections of `markdown`, by name, as they stand. */
export function sectionsOf(markdown: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const match of markdown.matchAll(/<!-- generated: ([a-z-]+) \(node --import tsx scripts\/core-protocol-doc\.ts\) -->\n([\s\S]*?)\n<!-- end generated: \1 -->/g)) {
    found[match[1] ?? ''] = match[2] ?? '';
  }
  return found;
}

/** `markdown` with each generated section replaced by its rendering; every section must have its markers. */
export function withSections(markdown: string, sections: Record<string, string>): string {
  let text = markdown;
  for (const [name, body] of Object.entries(sections)) {
    const from = text.indexOf(begin(name));
    const to = text.indexOf(end(name));
    if (from < 0 || to < from) throw new Error(`docs/core-protocol.md has no markers for the generated section ${name}: ${begin(name)} ... ${end(name)}`);
    text = `${text.slice(0, from)}${begin(name)}\n${body}\n${text.slice(to)}`;
  }
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(protocolOpenApiPath, openApiText(await servedProtocolDocument()));
  writeFileSync(protocolMarkdownPath, withSections(readFileSync(protocolMarkdownPath, 'utf8'), renderSections()));
}
