/** The bench's outputs: the JSON of every number, the summary table, the Markdown report and its SVG chart. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { verificationBaseline, type BaselineFigure } from './baselines.js';
import { boundBy } from './cpu.js';
import type { Measurement } from './load.js';

export type StoreName = 'sqlite' | 'postgres';

export interface StoreRun {
  scenarios: Measurement[];
  /** Every baseline measurement of this store's run, in order. */
  baselines: BaselineRun[];
  /** Each judged path with the baseline measured just before and just after it. */
  judged: Judged[];
  peakRssMiB: number;
}

export interface BaselineRun extends BaselineFigure {
  name: string;
}

export interface Judged {
  scenario: string;
  baseline: string;
  before: number;
  after: number;
}

export interface Row {
  path: string;
  coregate: string;
  /** The server's CPU a request (and PostgreSQL's), µs. */
  cpu: string;
  baseline: string;
  /** coregate's number against the mean of the baseline before and after; absent for absolute targets. */
  ratio?: number;
  /** The ratio against the larger and the smaller of the two baselines. */
  ratioRange?: [number, number];
  target: string;
  met: boolean;
  /** What bounded the run (bench/cpu.ts). */
  bound: string;
}

export interface BenchResult {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; os: string };
  settings: { connections: number; seconds: number; warmupSeconds: number; smoke: boolean; workers: number };
  stores: Partial<Record<StoreName, StoreRun>>;
  table: Row[];
}

export function machine(): BenchResult['machine'] {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    os: `${platform()} ${release()}`,
  };
}

const storeLabel: Record<StoreName, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
const rate = (n: number | undefined) => (n === undefined ? '–' : `${n.toLocaleString('en-US')}/s`);
const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;

const micros = (value: number | undefined) => (value === undefined ? '–' : `${value.toLocaleString('en-US')} µs`);

/** coregate's and PostgreSQL's CPU a request, µs. */
function totalCpu(value: Measurement | undefined): number | undefined {
  const cpu = value?.cpu;
  return cpu === undefined ? undefined : cpu.serverUsPerRequest + (cpu.postgresUsPerRequest ?? 0);
}

const round = (value: number) => Math.round(value * 10) / 10;

function cpuText(value: Measurement | undefined): string {
  const cpu = value?.cpu;
  if (!cpu) return '–';
  return cpu.postgresUsPerRequest === undefined ? micros(cpu.serverUsPerRequest) : `${micros(cpu.serverUsPerRequest)} + PostgreSQL ${micros(cpu.postgresUsPerRequest)}`;
}

/** The performance table: each path against its baselines (just before and after) and target. */
export function summaryTable(stores: BenchResult['stores']): Row[] {
  const rows: Row[] = [];
  const measuredRow = (path: string, value: Measurement) => ({ path, coregate: `${rate(value.perSecond)}, p99 ${value.p99Ms} ms`, cpu: cpuText(value), bound: boundBy(value.cpu) });
  const ratioRow = (path: string, value: Measurement | undefined, judged: Judged | undefined, target: number) => {
    if (!value || !judged || judged.before <= 0 || judged.after <= 0) return;
    const mean = (judged.before + judged.after) / 2;
    const ratio = value.perSecond / mean;
    const ratioRange: [number, number] = [value.perSecond / Math.max(judged.before, judged.after), value.perSecond / Math.min(judged.before, judged.after)];
    rows.push({
      ...measuredRow(path, value),
      baseline: `${judged.baseline}, ${rate(judged.before)} before, ${rate(judged.after)} after`,
      ratio,
      ratioRange,
      target: `≥ ${target * 100} %`,
      met: ratio >= target && value.unexpected === 0,
    });
  };
  /** A sender-constrained path beside its bearer figure (docs/auth.md, "DPoP at the API"): no target, what it costs. */
  const besideRow = (path: string, value: Measurement | undefined, bearerName: string, bearer: Measurement | undefined) => {
    if (!value) return;
    rows.push({
      ...measuredRow(path, value),
      baseline: bearer ? `${bearerName}, ${rate(bearer.perSecond)}` : '–',
      ...(bearer ? { ratio: value.perSecond / bearer.perSecond } : {}),
      target: '–',
      met: value.unexpected === 0,
    });
  };
  /**
   * A sender-constrained path judged by its CPU a request, coregate's and PostgreSQL's (issue 42):
   * at most its bearer path's plus `verifications` ES256 verifications, measured in the same run
   * (the mean of the store's measurements). The ratio is the path's CPU to that bound.
   */
  const boundRow = (path: string, value: Measurement | undefined, bearerName: string, bearer: Measurement | undefined, verifications: number, verificationUs: number | undefined) => {
    if (!value) return;
    const own = totalCpu(value);
    const reference = totalCpu(bearer);
    const comparable = own !== undefined && reference !== undefined && verificationUs !== undefined;
    const bound = comparable ? reference + verifications * verificationUs : undefined;
    rows.push({
      ...measuredRow(path, value),
      baseline: bound === undefined ? '–' : `${bearerName} ${micros(round(reference as number))} + ${verifications} × ${micros(verificationUs)} = ${micros(round(bound))}${bearer ? ` (${bearerName} ${rate(bearer.perSecond)})` : ''}`,
      ...(bound === undefined ? {} : { ratio: (own as number) / bound }),
      target: `CPU ≤ ${bearerName} + ${verifications} verification${verifications === 1 ? '' : 's'}`,
      met: value.unexpected === 0 && bound !== undefined && (own as number) <= bound,
    });
  };
  /** A refusal against the retrieve's CPU a request (issue 28: a refusal costs no more than a retrieve). */
  const costRow = (path: string, value: Measurement | undefined, retrieve: Measurement | undefined) => {
    if (!value) return;
    const own = value.cpu?.serverUsPerRequest;
    const retrieveCpu = retrieve?.cpu?.serverUsPerRequest;
    const comparable = own !== undefined && retrieveCpu !== undefined && retrieveCpu > 0;
    rows.push({
      ...measuredRow(path, value),
      baseline: comparable ? `the retrieve's CPU, ${micros(retrieveCpu)} a request` : '–',
      ...(comparable ? { ratio: own / retrieveCpu } : {}),
      target: "CPU ≤ the retrieve's",
      met: value.unexpected === 0 && comparable && own <= retrieveCpu,
    });
  };
  for (const store of ['sqlite', 'postgres'] as const) {
    const run = stores[store];
    if (!run) continue;
    const find = (name: string) => run.scenarios.find((scenario) => scenario.name === name);
    const judgedOf = (name: string) => run.judged.find((entry) => entry.scenario === name);
    const label = storeLabel[store];
    ratioRow(`token, RS256 (${label})`, find('token RS256'), judgedOf('token RS256'), 0.7);
    const verifications = run.baselines.filter((baseline) => baseline.name === verificationBaseline && baseline.cpuUsPerOperation !== undefined);
    const verificationUs = verifications.length === 0 ? undefined : round(verifications.reduce((sum, baseline) => sum + (baseline.cpuUsPerOperation ?? 0), 0) / verifications.length);
    ratioRow(`token, ES256 realm (${label})`, find('token ES256'), judgedOf('token ES256'), 0.5);
    boundRow(`token, private_key_jwt + DPoP, ES256 (${label})`, find('token private_key_jwt + DPoP'), 'the secret-and-bearer ES256 token', find('token ES256'), 3, verificationUs);
    ratioRow(`term deposit initiation, ${label}, 200 accounts`, find('term deposit initiation'), judgedOf('term deposit initiation'), store === 'sqlite' ? 0.35 : 0.5);
    const half = find('term deposit initiation at half rate');
    if (half) rows.push({ ...measuredRow(`same, p99 at half the measured rate (${label})`, half), baseline: '–', target: 'p99 ≤ 25 ms', met: half.p99Ms <= 25 && half.unexpected === 0 });
    const retrieve = find('retrieve');
    ratioRow(`retrieve, reused token (${label})`, retrieve, judgedOf('retrieve'), 0.4);
    boundRow(`retrieve, DPoP-bound token, a proof each (${label})`, find('retrieve DPoP'), 'the bearer retrieve', retrieve, 2, verificationUs);
    boundRow(`retrieve, mTLS-bound token, TLS kept per connection (${label})`, find('retrieve mTLS-bound'), 'the bearer retrieve', retrieve, 1, verificationUs);
    besideRow(`retrieve, bearer token over the same TLS server (${label})`, find('retrieve over TLS, bearer'), 'the bearer retrieve', retrieve);
    ratioRow(`401, malformed token (${label})`, find('401 malformed token'), judgedOf('401 malformed token'), 0.6);
    ratioRow(`400, valid token, invalid body, audited (${label})`, find('400 invalid body'), judgedOf('400 invalid body'), 0.3);
    for (const name of ['401 forged signature, replayed', '401 forged signature, each unique', '403 scope', '404 unknown route', '415 text/plain, audited', '413 body over 64 KiB, audited']) {
      costRow(`${name} (${label})`, find(name), retrieve);
    }
    const spread = find('term deposit initiation');
    const hot = find('hot account');
    if (hot && spread) {
      const ratio = hot.perSecond / spread.perSecond;
      rows.push({ ...measuredRow(`hot account, all debit one account (${label})`, hot), baseline: `the spread-out case, ${rate(spread.perSecond)}`, ratio, target: '≥ 25 %', met: ratio >= 0.25 && hot.unexpected === 0 });
    }
    const loan = find('loan installment execution');
    if (loan) rows.push({ ...measuredRow(`loan installment execution (${label})`, loan), baseline: '–', target: '–', met: loan.unexpected === 0 });
  }
  const peak = Math.max(0, ...Object.values(stores).map((run) => run?.peakRssMiB ?? 0));
  rows.push({ path: 'memory (peak RSS of a server)', coregate: `${peak} MiB`, cpu: '–', baseline: '–', target: '≤ 400 MiB', met: peak > 0 && peak <= 400, bound: '–' });
  return rows;
}

function ratioText(row: Row): string {
  if (row.ratio === undefined) return '–';
  return row.ratioRange === undefined ? percent(row.ratio) : `${percent(row.ratio)} (${percent(row.ratioRange[0])}–${percent(row.ratioRange[1])})`;
}

export function printTable(rows: Row[]): void {
  const lines = rows.map((row) => [row.path, row.coregate, row.cpu, row.baseline, ratioText(row), row.target, row.met ? 'met' : 'MISSED', row.bound]);
  const header = ['path', 'coregate', 'CPU a request', 'baseline, same run', 'ratio', 'target', '', 'bounded by'];
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => (line[column] ?? '').length)));
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  console.log(format(header));
  console.log(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const line of lines) console.log(format(line));
}

export function writeReport(outDir: string, result: BenchResult): { json: string; markdown: string; svg: string } {
  mkdirSync(outDir, { recursive: true });
  const json = join(outDir, `${result.date}.json`);
  const markdown = join(outDir, `${result.date}.md`);
  const svg = join(outDir, `${result.date}.svg`);
  writeFileSync(json, `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(svg, chart(result));
  writeFileSync(markdown, markdownReport(result, `${result.date}.svg`));
  return { json, markdown, svg };
}

function markdownReport(result: BenchResult, svgName: string): string {
  const { machine: m, settings: s } = result;
  const table = [
    '| path | coregate | CPU a request | baseline, same run (just before, just after) | ratio to their mean (range) | target | | bounded by |',
    '|---|---|---|---|---|---|---|---|',
    ...result.table.map((row) => `| ${row.path} | ${row.coregate} | ${row.cpu} | ${row.baseline} | ${ratioText(row)} | ${row.target} | ${row.met ? 'met' : '**missed**'} | ${row.bound} |`),
  ];
  const scenarios = [
    '| store | scenario | req/s | p50 ms | p99 ms | requests | unexpected | statuses | server µs/req | PostgreSQL µs/req | server cores (main thread) | load generator cores | machine busy |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [store, run] of Object.entries(result.stores)) {
    for (const scenario of run?.scenarios ?? []) {
      const cpu = scenario.cpu;
      const cells = cpu ? [cpu.serverUsPerRequest, cpu.postgresUsPerRequest ?? '–', `${cpu.serverCores} (${cpu.serverMainThreadCores})`, cpu.loadGeneratorCores, `${Math.round(cpu.machineBusy * 100)} %`] : ['–', '–', '–', '–', '–'];
      scenarios.push(`| ${store} | ${scenario.name} | ${scenario.perSecond} | ${scenario.p50Ms} | ${scenario.p99Ms} | ${scenario.requests} | ${scenario.unexpected} | ${JSON.stringify(scenario.statuses)} | ${cells.join(' | ')} |`);
    }
  }
  const baselineLines = ['| store | baseline | per second | CPU each, µs | load generator cores | bounded by |', '|---|---|---|---|---|---|'];
  for (const [store, run] of Object.entries(result.stores)) {
    for (const baseline of run?.baselines ?? []) {
      baselineLines.push(`| ${store} | ${baseline.name} | ${baseline.perSecond} | ${baseline.cpuUsPerOperation ?? '–'} | ${baseline.cpu?.loadGeneratorCores ?? '–'} | ${baseline.cpu ? boundBy(baseline.cpu) : '–'} |`);
    }
  }
  return [
    `# coregate bench, ${result.date}`,
    '',
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node.js ${m.node}, ${m.os}. \`coregate serve\`${s.workers > 1 ? ` --workers ${s.workers}` : ''}, ${s.connections} connections, ${s.seconds} s per scenario after ${s.warmupSeconds} s of warm-up${s.smoke ? ' (smoke run: the numbers mean nothing)' : ''}.`,
    '',
    ...table,
    '',
    `![throughput and p99 per scenario](${svgName})`,
    '',
    '## Every scenario',
    '',
    ...scenarios,
    '',
    'Every baseline, in the order measured (each just before and just after the paths it judges); the CPU of jose and TPC-B is this process\'s, of pgbench PostgreSQL\'s, of hello-world its server\'s:',
    '',
    ...baselineLines,
    '',
    '"Bounded by": the party at ≥ 85 % of a core during the run (the load generator, autocannon in the bench\'s process; coregate\'s event loop; PostgreSQL), else every core busy, else the run waited (disk syncs, locks). See docs/performance.md.',
    '',
  ].join('\n');
}

/** Two bar panels per scenario: throughput (left) and p99 latency (right). */
function chart(result: BenchResult): string {
  const bars: Array<{ label: string; perSecond: number; p99Ms: number }> = [];
  for (const [store, run] of Object.entries(result.stores)) {
    for (const scenario of run?.scenarios ?? []) bars.push({ label: `${store} · ${scenario.name}`, perSecond: scenario.perSecond, p99Ms: scenario.p99Ms });
  }
  const rowHeight = 22;
  const labelWidth = 330;
  const panelWidth = 300;
  const top = 40;
  const height = top + bars.length * rowHeight + 20;
  const width = labelWidth + panelWidth * 2 + 60;
  const maxRate = Math.max(1, ...bars.map((bar) => bar.perSecond));
  const maxP99 = Math.max(1, ...bars.map((bar) => bar.p99Ms));
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const rows = bars.map((bar, index) => {
    const y = top + index * rowHeight;
    const rateWidth = (bar.perSecond / maxRate) * (panelWidth - 70);
    const p99Width = (bar.p99Ms / maxP99) * (panelWidth - 70);
    const p99X = labelWidth + panelWidth + 30;
    return [
      `<text x="${labelWidth - 8}" y="${y + 15}" text-anchor="end">${escape(bar.label)}</text>`,
      `<rect x="${labelWidth}" y="${y + 3}" width="${rateWidth.toFixed(1)}" height="${rowHeight - 8}" fill="#2f6fb0"/>`,
      `<text x="${(labelWidth + rateWidth + 4).toFixed(1)}" y="${y + 15}">${bar.perSecond}/s</text>`,
      `<rect x="${p99X}" y="${y + 3}" width="${p99Width.toFixed(1)}" height="${rowHeight - 8}" fill="#c0562f"/>`,
      `<text x="${(p99X + p99Width + 4).toFixed(1)}" y="${y + 15}">${bar.p99Ms} ms</text>`,
    ].join('');
  });
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${labelWidth}" y="24" font-weight="bold">requests per second</text>`,
    `<text x="${labelWidth + panelWidth + 30}" y="24" font-weight="bold">p99 latency</text>`,
    ...rows,
    '</svg>',
    '',
  ].join('\n');
}
