/** The bench's outputs: the JSON of every number, the summary table, the Markdown report and its SVG chart. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import type { Measurement } from './load.js';

export type StoreName = 'sqlite' | 'postgres';

export interface StoreRun {
  scenarios: Measurement[];
  /** Measured in this store's run, each just before the scenarios it judges. */
  baselines: Baselines;
  peakRssMiB: number;
}

export interface Baselines {
  joseRs256PerSecond?: number;
  joseEs256PerSecond?: number;
  sqliteTransfersPerSecond?: number;
  pgbenchTps?: number;
  helloWorldPerSecond?: number;
}

export interface Row {
  path: string;
  coregate: string;
  baseline: string;
  /** coregate's number against the baseline's; absent for absolute targets. */
  ratio?: number;
  target: string;
  met: boolean;
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

/** The performance table: each path against its baseline and target. */
export function summaryTable(stores: BenchResult['stores']): Row[] {
  const rows: Row[] = [];
  const ratioRow = (path: string, value: Measurement | undefined, baselineName: string, baseline: number | undefined, target: number) => {
    if (!value || !baseline) return;
    const ratio = value.perSecond / baseline;
    rows.push({ path, coregate: `${rate(value.perSecond)}, p99 ${value.p99Ms} ms`, baseline: `${baselineName}, ${rate(baseline)}`, ratio, target: `≥ ${target * 100} %`, met: ratio >= target && value.unexpected === 0 });
  };
  /** A sender-constrained path beside its bearer figure (CONTRACT §13): no target, what it costs. */
  const besideRow = (path: string, value: Measurement | undefined, bearerName: string, bearer: Measurement | undefined) => {
    if (!value) return;
    rows.push({
      path,
      coregate: `${rate(value.perSecond)}, p99 ${value.p99Ms} ms`,
      baseline: bearer ? `${bearerName}, ${rate(bearer.perSecond)}` : '–',
      ...(bearer ? { ratio: value.perSecond / bearer.perSecond } : {}),
      target: '–',
      met: value.unexpected === 0,
    });
  };
  for (const store of ['sqlite', 'postgres'] as const) {
    const run = stores[store];
    if (!run) continue;
    const find = (name: string) => run.scenarios.find((scenario) => scenario.name === name);
    const label = storeLabel[store];
    const { baselines } = run;
    ratioRow(`token, RS256 (${label})`, find('token RS256'), 'jose RS256 signing on all cores', baselines.joseRs256PerSecond, 0.7);
    ratioRow(`token, ES256 realm (${label})`, find('token ES256'), 'jose ES256 signing on all cores', baselines.joseEs256PerSecond, 0.5);
    besideRow(`token, private_key_jwt + DPoP, ES256 (${label})`, find('token private_key_jwt + DPoP'), 'the secret-and-bearer ES256 token', find('token ES256'));
    if (store === 'sqlite') {
      ratioRow('term deposit initiation, SQLite, 200 accounts', find('term deposit initiation'), 'better-sqlite3 TPC-B-like (WAL, FULL)', baselines.sqliteTransfersPerSecond, 0.35);
    } else {
      ratioRow('term deposit initiation, PostgreSQL, 200 accounts', find('term deposit initiation'), 'pgbench TPC-B, same connections', baselines.pgbenchTps, 0.5);
    }
    const half = find('term deposit initiation at half rate');
    if (half) {
      const met = half.p99Ms <= 25 && half.unexpected === 0;
      rows.push({ path: `same, p99 at half the measured rate (${label})`, coregate: `${rate(half.perSecond)}, p99 ${half.p99Ms} ms`, baseline: '–', target: 'p99 ≤ 25 ms', met });
    }
    ratioRow(`retrieve, reused token (${label})`, find('retrieve'), 'Fastify hello-world', baselines.helloWorldPerSecond, 0.4);
    besideRow(`retrieve, DPoP-bound token, a proof each (${label})`, find('retrieve DPoP'), 'the bearer retrieve', find('retrieve'));
    ratioRow(`401, malformed token (${label})`, find('401 malformed token'), 'Fastify hello-world', baselines.helloWorldPerSecond, 0.6);
    ratioRow(`400, valid token, invalid body, audited (${label})`, find('400 invalid body'), 'Fastify hello-world', baselines.helloWorldPerSecond, 0.3);
    const spread = find('term deposit initiation');
    ratioRow(`hot account, all debit one account (${label})`, find('hot account'), 'the spread-out case', spread?.perSecond, 0.25);
    const loan = find('loan installment execution');
    if (loan) rows.push({ path: `loan installment execution (${label})`, coregate: `${rate(loan.perSecond)}, p99 ${loan.p99Ms} ms`, baseline: '–', target: '–', met: loan.unexpected === 0 });
  }
  const peak = Math.max(0, ...Object.values(stores).map((run) => run?.peakRssMiB ?? 0));
  rows.push({ path: 'memory (peak RSS of a server)', coregate: `${peak} MiB`, baseline: '–', target: '≤ 400 MiB', met: peak > 0 && peak <= 400 });
  return rows;
}

export function printTable(rows: Row[]): void {
  const lines = rows.map((row) => [row.path, row.coregate, row.baseline, row.ratio === undefined ? '–' : percent(row.ratio), row.target, row.met ? 'met' : 'MISSED']);
  const header = ['path', 'coregate', 'baseline, same run', 'ratio', 'target', ''];
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
    '| path | coregate | baseline, same run (just before) | ratio | target | |',
    '|---|---|---|---|---|---|',
    ...result.table.map((row) => `| ${row.path} | ${row.coregate} | ${row.baseline} | ${row.ratio === undefined ? '–' : percent(row.ratio)} | ${row.target} | ${row.met ? 'met' : '**missed**'} |`),
  ];
  const scenarios = ['| store | scenario | req/s | p50 ms | p99 ms | requests | unexpected | statuses |', '|---|---|---|---|---|---|---|---|'];
  for (const [store, run] of Object.entries(result.stores)) {
    for (const scenario of run?.scenarios ?? []) {
      scenarios.push(`| ${store} | ${scenario.name} | ${scenario.perSecond} | ${scenario.p50Ms} | ${scenario.p99Ms} | ${scenario.requests} | ${scenario.unexpected} | ${JSON.stringify(scenario.statuses)} |`);
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
    'Baselines, each measured in its store\'s run just before the scenarios it judges:',
    '',
    ...Object.entries(result.stores).map(([store, run]) => `- ${store}: ${JSON.stringify(run?.baselines ?? {})}`),
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
