/**
 * The failover torture test (issue 24): the torture of issue 8 with the database failing over
 * under load. Two API instances (`coregate serve`, the embedded core on their own database, as
 * processes) reach PostgreSQL through a TCP proxy, the address that moves at a failover; behind it
 * a primary with a synchronous hot standby (test/helpers/pg-cluster.ts). Clients initiate term
 * deposits and pay loan installments, repeating with the same correlation id whatever went
 * unanswered (failover-client.ts). Meanwhile the database fails over again and again: the primary
 * is killed (all its processes at once, or `pg_ctl stop -m immediate`), the standby promoted, the
 * proxy moved to it and a new standby built from it with pg_basebackup; between failovers every
 * connection through the proxy is cut at once (a network blip, a pgbouncer restart). An API
 * process that exits is an anomaly (it is restarted, as a supervisor would, so the run goes on).
 * At the end the new primary's rows are checked (failover-checks.ts), and every 503 a client
 * received for an operation is found in the audit trail by its correlation id (docs/api.md "Audit": the
 * instances keep refusals answered during an outage in their audit spool, one directory shared by
 * both, and append them once the database is back).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/store/connect.js';
import { PgCluster } from '../helpers/pg-cluster.js';
import { freePort, spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { sleep } from '../helpers/wait.js';
import { checkAfterFailovers, checkUnavailableAudited, outageLinesOf, waitUntilSettled, type OutageLine } from './failover-checks.js';
import { FailoverClient, type ClientOutcome, type OperationRequest } from './failover-client.js';
import { randomPrincipal, tortureAccounts, tortureDepositBody, tortureFacility, tortureInstallmentAmount, tortureInstallmentBody, writeTortureDataFile } from './torture-data.js';

export interface FailoverTortureOptions {
  durationMs: number;
  clients: number;
  /** Time between chaos events, which alternate failover and blip (default: from the duration). */
  eventIntervalMs?: number;
  log: (line: string) => void;
}

export interface FailoverTortureReport {
  operations: number;
  acknowledged: number;
  /** Acknowledged after the first failover had completed (the service came back). */
  acknowledgedAfterFailover: number;
  /** Acknowledged through a repeat answered 409: an attempt whose answer was lost had executed. */
  acknowledgedViaRepeat: number;
  refused: number;
  /** Refusals by code (`ML-409-003`): business rules, never a failover's doing. */
  refusals: Record<string, number>;
  unknownToClients: number;
  failovers: number;
  kills: number;
  blips: number;
  connectionsCut: number;
  standbysRebuilt: number;
  /** API processes that exited on their own (each is an anomaly too). */
  processExits: number;
  /** Every answer the clients met: HTTP statuses, `token <status>`, time-outs, connection errors. */
  answers: Record<string, number>;
  /** The longest a client waited between acknowledgements across a failover, ms. */
  longestAcknowledgementGapMs: number;
  /** 503s the clients received for operations, those refused before authentication had finished (no record owed), and the audit records of 503s found for them. */
  unavailable: { answered: number; beforeAuthentication: number; audited: number };
  anomalies: string[];
}

/** The source account's opening balance, USD: plenty for any run's deposits. */
const sourceOpening = 1_000_000_000;
/** How long one operation is repeated before its client gives up on it (unknown). */
const operationBudgetMs = 60_000;
/** The bound on the reconciler and the pending worker settling what the run left open. */
const settleBoundMs = 120_000;
/** A failover's detection time: the primary is dead and the address has not moved yet. */
const detectionMs = 1_000;
/** The bound on the instances' audit spools being drained into the audit trail after the load. */
const auditedBoundMs = 60_000;

export async function runPgFailoverTorture(options: FailoverTortureOptions): Promise<FailoverTortureReport> {
  const startedAt = Date.now();
  const at = () => `+${((Date.now() - startedAt) / 1000).toFixed(1)}s`;
  const log = (line: string) => options.log(`# ${at()} ${line}`);
  const anomalies: string[] = [];
  const answers: Record<string, number> = {};
  const count = (answer: string) => {
    answers[answer] = (answers[answer] ?? 0) + 1;
  };
  const outcomes: ClientOutcome[] = [];
  const principalMinorByCorrelation = new Map<string, bigint>();
  /** 503s received for operations, by correlation id. */
  const unavailableReceived = new Map<string, number>();
  const onUnavailable = (correlationId: string) => unavailableReceived.set(correlationId, (unavailableReceived.get(correlationId) ?? 0) + 1);
  const figures = { failovers: 0, kills: 0, blips: 0, connectionsCut: 0, standbysRebuilt: 0, processExits: 0 };
  let firstFailoverDoneAtMs = Number.POSITIVE_INFINITY;

  const cluster = await PgCluster.start();
  let proxy: TcpProxy | undefined;
  const instances: Instance[] = [];
  let checker: Store | undefined;
  // Shared by both instances, as by the processes of one host (docs/deployment.md).
  const auditSpool = mkdtempSync(join(tmpdir(), 'coregate-failover-spool-'));
  try {
    const database = `coregate_failover_${randomBytes(4).toString('hex')}`;
    await cluster.createDatabase(database);
    proxy = await TcpProxy.start(cluster.primary.port);
    const dbUrl = cluster.url(proxy.port, database);
    const installments = Math.max(2_000, Math.ceil((options.durationMs / 60_000) * 4_000));
    // Accounts no run drains: the payment account covers every installment twice.
    const dataFile = writeTortureDataFile(
      { installments, sourceOpening, paymentOpening: tortureInstallmentAmount * installments * 2, expenseOpening: 100 * installments },
      'coregate-failover-',
    );
    const ports = [await freePort(), await freePort()];
    const publicUrl = `http://127.0.0.1:${ports[0]}`;
    const args = ['serve', '--db', dbUrl, '--data', dataFile, '--public-url', publicUrl, '--reconcile-interval-ms', '500', '--audit-spool', auditSpool];
    const env = { COREGATE_LOG_LEVEL: 'warn', COREGATE_RECONCILE_BACKOFF_MAX_MS: '2000', COREGATE_SHUTDOWN_GRACE_MS: '3000' };
    for (const [index, port] of ports.entries()) {
      instances.push(new Instance(index + 1, () => spawnCoregate(args, { port, env }), (line) => {
        figures.processExits += 1;
        anomalies.push(line);
        log(line.split('\n')[0] ?? line);
      }, log));
    }
    // One at a time: the first migrates and loads the data, the second finds it done.
    for (const instance of instances) await instance.start();
    log(`cluster ${cluster.primary.name} (primary, port ${cluster.primary.port}) + ${cluster.standby?.name} (synchronous standby); proxy ${proxy.port}; API ${ports.join(', ')}`);

    // The run's time is the load's: setting up (initdb, migrations, the data) is not counted.
    const loadStartedAt = Date.now();
    const deadline = loadStartedAt + options.durationMs;
    const baseUrls = ports.map((port) => `http://127.0.0.1:${port}`);
    let installment = 0;
    const nextRequest = (): OperationRequest => {
      const respondAsync = Math.random() < 0.1;
      if (Math.random() < 0.35) {
        installment += 1;
        const sequence = ((installment - 1) % installments) + 1;
        return { operation: 'loan', path: `/v1/merchandising-loan/${tortureFacility}/repayment-schedules/${sequence}/execute`, respondAsync, body: tortureInstallmentBody(sequence) };
      }
      return { operation: 'termDeposit', path: '/v1/term-deposits/initiate', respondAsync, body: tortureDepositBody(randomPrincipal()) };
    };

    let lastAcknowledgedAtMs = Date.now();
    let longestAcknowledgementGapMs = 0;
    const worker = async (index: number) => {
      const client = new FailoverClient(baseUrls, count, onUnavailable);
      while (Date.now() < deadline) {
        const request = nextRequest();
        const outcome = await client.perform(request, index % baseUrls.length, Date.now() + operationBudgetMs, (correlationId) => {
          if (request.operation === 'termDeposit') {
            const principal = (request.body as { principalAmount: { amountValue: number } }).principalAmount.amountValue;
            principalMinorByCorrelation.set(correlationId, BigInt(principal) * 100n);
          }
        });
        outcomes.push(outcome);
        if (outcome.kind === 'executed' || outcome.kind === 'accepted') {
          longestAcknowledgementGapMs = Math.max(longestAcknowledgementGapMs, outcome.atMs - lastAcknowledgedAtMs);
          lastAcknowledgedAtMs = Math.max(lastAcknowledgedAtMs, outcome.atMs);
        }
      }
    };

    const failover = async () => {
      const how = figures.failovers % 2 === 0 ? 'sigkill' : 'immediate';
      // Every other failover the address holds new connections while it moves; otherwise they
      // meet the dead server (refused) until it has moved.
      const hold = figures.failovers % 2 === 0;
      const dead = cluster.primary.name;
      if (hold) proxy?.pause('hold');
      await cluster.killPrimary(how);
      figures.kills += 1;
      // The balancer drops the dead server's sessions (HAProxy's on-marked-down shutdown-sessions).
      figures.connectionsCut += proxy?.cutAll() ?? 0;
      await sleep(detectionMs);
      const promoted = await cluster.promoteStandby();
      proxy?.retarget(promoted.port);
      proxy?.resume();
      figures.failovers += 1;
      if (figures.failovers === 1) firstFailoverDoneAtMs = Date.now();
      log(`failover ${figures.failovers}: ${dead} killed (${how}), ${promoted.name} promoted, the address moved${hold ? ' (new connections held meanwhile)' : ''}`);
      const standby = await cluster.rebuildStandby();
      figures.standbysRebuilt += 1;
      log(`${standby.name}: a new synchronous standby of ${promoted.name}`);
    };
    const blip = () => {
      const cut = proxy?.cutAll() ?? 0;
      figures.blips += 1;
      figures.connectionsCut += cut;
      log(`blip ${figures.blips}: ${cut} connections cut`);
    };
    const chaos = async () => {
      const intervalMs = options.eventIntervalMs ?? Math.min(30_000, Math.max(12_000, options.durationMs / 12));
      const lastEventAtMs = deadline - options.durationMs * 0.15;
      let nextAtMs = loadStartedAt + Math.max(10_000, options.durationMs * 0.25);
      for (let event = 0; nextAtMs < lastEventAtMs; event += 1) {
        await sleep(nextAtMs - Date.now());
        try {
          if (event % 2 === 0) await failover();
          else blip();
        } catch (error) {
          anomalies.push(`the drill itself failed at ${at()}: ${(error as Error).message}\n${cluster.nodes.map((node) => `${node.name}: ${cluster.logTail(node, 8)}`).join('\n')}`);
          return;
        }
        nextAtMs = Math.max(nextAtMs + intervalMs, Date.now() + 5_000);
      }
    };

    await Promise.all([chaos(), ...Array.from({ length: options.clients }, (_, index) => worker(index))]);
    log(`load done: ${outcomes.length} operations by the clients; settling`);
    await Promise.all(instances.map((instance) => instance.ready()));

    checker = await openStore(cluster.url(cluster.primary.port, database));
    const open = await waitUntilSettled(checker.db, settleBoundMs);
    for (const operation of open.slice(0, 20)) anomalies.push(`operation ${operation.reference} is still ${operation.status} ${settleBoundMs / 1000} s after the load`);
    // What the clients could not decide, they ask about now, as a client following Location would.
    const reader = new FailoverClient(baseUrls, () => {});
    for (const outcome of outcomes) {
      if ((outcome.kind !== 'accepted' && outcome.kind !== 'unknown') || outcome.reference === undefined) continue;
      const view = await reader.operationStatus(outcome.reference, Date.now() + 10_000);
      if (view !== undefined && view.status !== 'Executed' && view.status !== 'Rejected') anomalies.push(`GET /v1/operations/${outcome.reference} says ${view.status} after settling`);
    }
    anomalies.push(
      ...(await checkAfterFailovers({
        db: checker.db,
        dbUrl: cluster.url(cluster.primary.port, database),
        outcomes,
        ledger: { sourceAccount: tortureAccounts.source, sourceOpeningMinor: BigInt(sourceOpening) * 100n, principalMinorByCorrelation },
      })),
    );
    const unavailable = await checkUnavailableAudited({
      db: checker.db,
      received: unavailableReceived,
      outageLines: instances.flatMap((instance) => instance.outageLines),
      boundMs: auditedBoundMs,
    });
    anomalies.push(...unavailable.anomalies);
    const operations = await checker.db.selectFrom('operations').select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
    const acknowledged = outcomes.filter((outcome) => outcome.kind === 'executed' || outcome.kind === 'accepted');
    return {
      operations: Number(operations.count),
      acknowledged: acknowledged.length,
      acknowledgedAfterFailover: acknowledged.filter((outcome) => outcome.atMs > firstFailoverDoneAtMs).length,
      acknowledgedViaRepeat: outcomes.filter((outcome) => outcome.kind === 'executed' && outcome.viaRepeat).length,
      refused: outcomes.filter((outcome) => outcome.kind === 'refused').length,
      refusals: tally(outcomes.flatMap((outcome) => (outcome.kind === 'refused' ? [outcome.code ?? `HTTP ${outcome.status}`] : []))),
      unknownToClients: outcomes.filter((outcome) => outcome.kind === 'unknown').length,
      ...figures,
      answers,
      longestAcknowledgementGapMs,
      unavailable: { answered: unavailable.answered, beforeAuthentication: unavailable.beforeAuthentication, audited: unavailable.audited },
      anomalies,
    };
  } finally {
    await checker?.close().catch(() => {});
    await Promise.all(instances.map((instance) => instance.stop()));
    await proxy?.close();
    await cluster.stop();
    rmSync(auditSpool, { recursive: true, force: true });
  }
}

/**
 * One API instance under a supervisor: an exit it did not ask for is reported (with the end of
 * the process's output, which says why) and the instance is started again until it is ready.
 */
class Instance {
  #process: CoregateProcess | undefined;
  #starting: Promise<void> | undefined;
  #stopping = false;
  /** The outage warnings of every process this instance ran, read as its output streams (a long run's output outgrows the kept tail). */
  readonly outageLines: OutageLine[] = [];

  constructor(
    readonly number: number,
    readonly spawn: () => Promise<CoregateProcess>,
    readonly onExit: (anomaly: string) => void,
    readonly log: (line: string) => void,
  ) {}

  start(): Promise<void> {
    this.#starting ??= (async () => {
      for (let attempt = 1; !this.#stopping; attempt += 1) {
        try {
          const started = await this.spawn();
          this.#process = started;
          this.#readOutageLines(started);
          void started.exit.then((exit) => this.#exited(started, exit));
          return;
        } catch (error) {
          // The database may be in the middle of a failover: try again.
          if (attempt === 1 || attempt % 10 === 0) this.log(`api ${this.number}: start attempt ${attempt} failed: ${(error as Error).message.split('\n')[0]}`);
          await sleep(1_000);
        }
      }
    })().finally(() => {
      this.#starting = undefined;
    });
    return this.#starting;
  }

  /** Resolves when the instance is running (after a restart in progress). */
  async ready(): Promise<void> {
    await this.#starting;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    await this.#starting;
    await this.#process?.stop('SIGKILL');
  }

  #readOutageLines(process: CoregateProcess): void {
    // What it wrote while it started, then each chunk as it comes; a line cut between two is joined.
    let pending = process.output().stdout;
    const take = (text: string) => {
      const lines = (pending + text).split('\n');
      pending = lines.pop() ?? '';
      this.outageLines.push(...outageLinesOf(lines.join('\n')));
    };
    take('');
    process.child.stdout?.on('data', (chunk) => take(String(chunk)));
  }

  #exited(process: CoregateProcess, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    if (this.#stopping) return;
    const { stdout, stderr } = process.output();
    const output = `${stdout}\n${stderr}`;
    // The error that ended it, when it printed one (a stack's first line), for the one-line log.
    const cause = output
      .split('\n')
      .reverse()
      .find((line) => /^[\w.]*(Error|Exception)\b/.test(line));
    this.onExit(`api ${this.number} process exited (code ${exit.code}, signal ${exit.signal}) at ${new Date().toISOString()}: ${cause ?? 'no error printed'}; its last output:\n${lastLines(output, 12)}`);
    void this.start();
  }
}

function tally(names: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}

function lastLines(text: string, count: number): string {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(-count)
    .map((line) => `    ${line.slice(0, 400)}`)
    .join('\n');
}

export function describePgFailover(report: FailoverTortureReport): string {
  const answers = Object.entries(report.answers)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([answer, count]) => `${answer} ${count}`)
    .join(', ');
  return [
    `operations: ${report.operations}`,
    `acknowledged: ${report.acknowledged} (after the first failover: ${report.acknowledgedAfterFailover}; through a repeat answered 409: ${report.acknowledgedViaRepeat})`,
    `refused: ${report.refused}${report.refused > 0 ? ` (${Object.entries(report.refusals).map(([code, count]) => `${code} ${count}`).join(', ')})` : ''}`,
    `unknown to clients (gave up): ${report.unknownToClients}`,
    `failovers: ${report.failovers}`,
    `kills: ${report.kills} (primary), api process exits: ${report.processExits}`,
    `blips: ${report.blips}, connections cut: ${report.connectionsCut}, standbys rebuilt: ${report.standbysRebuilt}`,
    `longest wait between acknowledgements: ${report.longestAcknowledgementGapMs} ms`,
    `503s: ${report.unavailable.answered} answered, ${report.unavailable.beforeAuthentication} of them before authentication (no record owed), ${report.unavailable.audited} audit records of 503s found for them`,
    `answers: ${answers}`,
    `anomalies: ${report.anomalies.length}`,
    ...report.anomalies.slice(0, 20).map((anomaly) => `  - ${anomaly}`),
  ].join('\n');
}
