/**
 * A PostgreSQL primary with a synchronous hot standby, of a test's own (issue 24): two clusters in
 * a temporary directory, on free ports of 127.0.0.1, from the PostgreSQL binaries installed on the
 * machine (/usr/lib/postgresql/<version>/bin, the newest). The standby is a `pg_basebackup -R` of
 * the primary that streams as `standby1`, and the primary waits for it on every commit
 * (`synchronous_commit = on`): a commit the primary acknowledged is on the standby's disk, which is
 * what makes a failover lose nothing. A test kills the primary, promotes the standby and builds a
 * new standby from the new primary, as many times as it likes.
 *
 * `initdb` refuses to run as root, so every PostgreSQL binary runs as the `postgres` user through
 * `runuser`; the helper therefore needs root (a CI container's user). Without the binaries or root
 * the tests that use it skip with the reason, except under CI=true, where they fail.
 */
import { execFile } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, appendFileSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './processes.js';
import { waitFor } from './wait.js';

const postgresqlRoot = '/usr/lib/postgresql';
const osUser = 'postgres';
/** The standby's name in the primary's synchronous_standby_names and its own primary_conninfo. */
const standbyName = 'standby1';
/** How long a PostgreSQL command (initdb, pg_basebackup, pg_ctl -w) may take on a loaded machine. */
const commandTimeoutMs = 120_000;

/** The newest installed PostgreSQL's bin directory, or undefined. */
export function postgresBinDir(): string | undefined {
  if (!existsSync(postgresqlRoot)) return undefined;
  const versions = readdirSync(postgresqlRoot)
    .filter((version) => existsSync(join(postgresqlRoot, version, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(postgresqlRoot, versions[0], 'bin');
}

/** Why a cluster cannot be made here (undefined: it can); under CI=true a reason is an error. */
export function pgClusterSkip(): string | undefined {
  let reason: string | undefined;
  const bin = postgresBinDir();
  if (bin === undefined) reason = `no PostgreSQL binaries under ${postgresqlRoot}/<version>/bin`;
  else if (process.getuid?.() !== 0) reason = `the PostgreSQL binaries run as the ${osUser} user through runuser, which needs root (running as ${userInfo().username})`;
  else if (postgresUid() === undefined) reason = `no ${osUser} user to run the PostgreSQL binaries as`;
  if (reason === undefined) return undefined;
  if (process.env.CI === 'true') throw new Error(`cannot make a PostgreSQL primary and standby: ${reason}; CI=true requires them`);
  return `cannot make a PostgreSQL primary and standby: ${reason}`;
}

function postgresUid(): { uid: number; gid: number } | undefined {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${osUser}:`));
  const fields = line?.split(':');
  return fields?.[2] && fields[3] ? { uid: Number(fields[2]), gid: Number(fields[3]) } : undefined;
}

/** One PostgreSQL cluster (a data directory and its postmaster). */
export interface PgNode {
  name: string;
  port: number;
  dataDir: string;
  logFile: string;
  role: 'primary' | 'standby' | 'dead' | 'stopped';
}

export interface PgClusterOptions {
  /** Settings added to the primary's postgresql.conf (and so to every standby made from it). */
  settings?: Record<string, string | number>;
}

/** Every cluster alive in this process, for the exit safety net. */
const live = new Set<PgCluster>();
let safetyNetInstalled = false;

export class PgCluster {
  readonly #root: string;
  readonly #bin: string;
  readonly #nodes: PgNode[] = [];
  #primary: PgNode | undefined;
  #standby: PgNode | undefined;
  #stopping: Promise<void> | undefined;

  private constructor(root: string, bin: string) {
    this.#root = root;
    this.#bin = bin;
  }

  /** A primary and a streaming synchronous standby, ready for connections. */
  static async start(options: PgClusterOptions = {}): Promise<PgCluster> {
    const bin = postgresBinDir();
    const skip = pgClusterSkip();
    if (bin === undefined || skip !== undefined) throw new Error(skip ?? 'no PostgreSQL binaries');
    const cluster = new PgCluster(ownedDirectory(mkdtempSync(join(tmpdir(), 'coregate-pg-'))), bin);
    live.add(cluster);
    installSafetyNet();
    try {
      await cluster.#initPrimary(options.settings ?? {});
      await cluster.rebuildStandby();
      return cluster;
    } catch (error) {
      await cluster.stop();
      throw error;
    }
  }

  get primary(): PgNode {
    if (!this.#primary) throw new Error('the cluster has no primary (killed and not yet promoted?)');
    return this.#primary;
  }

  get standby(): PgNode | undefined {
    return this.#standby;
  }

  get nodes(): readonly PgNode[] {
    return this.#nodes;
  }

  get primaryUrl(): string {
    return this.url(this.primary.port);
  }

  get standbyUrl(): string {
    if (!this.#standby) throw new Error('the cluster has no standby');
    return this.url(this.#standby.port);
  }

  url(port: number, database = 'postgres'): string {
    return `postgres://${osUser}@127.0.0.1:${port}/${database}`;
  }

  /** CREATE DATABASE on the primary (replicated to the standby like everything else). */
  async createDatabase(name: string): Promise<void> {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
    await this.query(this.primary.port, `create database ${name}`);
  }

  /** One statement on a node, on a connection of its own. */
  async query<Row extends Record<string, unknown>>(port: number, text: string, database = 'postgres'): Promise<Row[]> {
    const client = new pg.Client({ connectionString: this.url(port, database), connectionTimeoutMillis: 10_000 });
    client.on('error', () => {});
    await client.connect();
    try {
      return (await client.query<Row>(text)).rows;
    } finally {
      await client.end().catch(() => {});
    }
  }

  /**
   * The primary dies. 'sigkill' (the default) freezes the postmaster and every process it started,
   * then kills them all, as a lost host would: no shutdown checkpoint, nothing said to clients.
   * 'immediate' is `pg_ctl stop -m immediate` (the postmaster tells its children to quit at once).
   */
  async killPrimary(how: 'sigkill' | 'immediate' = 'sigkill'): Promise<PgNode> {
    const node = this.primary;
    if (how === 'immediate') await this.#pgCtl(node, ['stop', '-m', 'immediate', '-w']);
    else killTree(postmasterPid(node));
    const pid = postmasterPid(node);
    await waitFor(`the killed primary ${node.name} to be gone`, async () => (pid === undefined || !alive(pid) ? true : undefined), 30_000);
    node.role = 'dead';
    this.#primary = undefined;
    return node;
  }

  /** Promotes the standby and waits until it takes writes; it is the primary from then on. */
  async promoteStandby(): Promise<PgNode> {
    const node = this.#standby;
    if (!node) throw new Error('no standby to promote');
    await this.#pgCtl(node, ['promote', '-w', '-t', String(commandTimeoutMs / 1000)]);
    node.role = 'primary';
    this.#standby = undefined;
    this.#primary = node;
    await this.waitUntilWritable(node);
    return node;
  }

  /** Waits until `node` is out of recovery and commits a transaction. */
  async waitUntilWritable(node: PgNode = this.primary, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      `${node.name} to take writes`,
      async () => {
        try {
          const [row] = await this.query<{ recovery: boolean }>(node.port, 'select pg_is_in_recovery() as recovery');
          if (row?.recovery !== false) return undefined;
          await this.query(node.port, 'select txid_current()');
          return true;
        } catch {
          return undefined;
        }
      },
      timeoutMs,
    );
  }

  /**
   * A new standby from the current primary (`pg_basebackup -R`), streaming as `standby1`; then the
   * primary waits for it on every commit. A promoted standby commits alone until this is done (a
   * primary whose synchronous standby is gone would hang every commit), so a test kills a primary
   * only while it has a synchronous standby.
   */
  async rebuildStandby(): Promise<PgNode> {
    if (this.#standby) throw new Error(`the cluster has a standby already: ${this.#standby.name}`);
    const primary = this.primary;
    const node = await this.#newNode();
    await this.#run('pg_basebackup', [
      '-d', `host=127.0.0.1 port=${primary.port} user=${osUser} application_name=${standbyName}`,
      '-D', node.dataDir, '-R', '-X', 'stream', '-c', 'fast', '--no-sync',
    ]);
    // The copy has the primary's settings; these lines come later in the file and win. A standby
    // ignores synchronous_standby_names; empty, it lets this node commit alone once promoted.
    appendFileSync(node.dataDir + '/postgresql.conf', settingLines({ port: node.port, hot_standby: 'on', synchronous_standby_names: "''" }));
    await this.#pgCtl(node, ['start', '-w', '-t', String(commandTimeoutMs / 1000), '-l', node.logFile]);
    node.role = 'standby';
    this.#standby = node;
    appendFileSync(primary.dataDir + '/postgresql.conf', settingLines({ synchronous_standby_names: `'${standbyName}'` }));
    await this.query(primary.port, 'select pg_reload_conf()');
    await this.waitUntilStreaming();
    return node;
  }

  /** Waits until the standby streams synchronously and has flushed everything the primary wrote so far. */
  async waitUntilStreaming(timeoutMs = 60_000): Promise<void> {
    const primary = this.primary;
    await waitFor(
      `the standby to stream synchronously from ${primary.name}`,
      async () => {
        try {
          const [row] = await this.query<{ caught_up: boolean | null }>(
            primary.port,
            `select (flush_lsn >= pg_current_wal_lsn()) as caught_up from pg_stat_replication where application_name = '${standbyName}' and state = 'streaming' and sync_state = 'sync'`,
          );
          return row?.caught_up === true ? true : undefined;
        } catch {
          return undefined;
        }
      },
      timeoutMs,
    );
  }

  /** The last lines of a node's server log (for a failure's message). */
  logTail(node: PgNode, lines = 20): string {
    try {
      return readFileSync(node.logFile, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '';
    }
  }

  /** Stops every postgres this cluster started and removes its directories; idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      for (const node of this.#nodes) {
        const pid = postmasterPid(node);
        if (pid !== undefined && alive(pid)) {
          await this.#pgCtl(node, ['stop', '-m', 'fast', '-w', '-t', '30']).catch(() => killTree(pid));
        }
        node.role = node.role === 'dead' ? 'dead' : 'stopped';
      }
      this.#primary = undefined;
      this.#standby = undefined;
      rmSync(this.#root, { recursive: true, force: true });
      live.delete(this);
    })();
    return this.#stopping;
  }

  /** Synchronous, for the process's exit: every postmaster and child killed, directories removed. */
  killNow(): void {
    for (const node of this.#nodes) {
      const pid = postmasterPid(node);
      if (pid !== undefined && alive(pid)) killTree(pid);
    }
    rmSync(this.#root, { recursive: true, force: true });
    live.delete(this);
  }

  async #initPrimary(settings: Record<string, string | number>): Promise<void> {
    const node = await this.#newNode();
    // --no-sync: initdb's own files are not flushed (a test cluster made in a second); the server
    // itself runs with fsync on, so a commit it acknowledges is on disk.
    await this.#run('initdb', ['-D', node.dataDir, '--no-sync', '-A', 'trust', '-U', osUser, '-E', 'UTF8', '--locale', 'C']);
    writeFileSync(
      node.dataDir + '/pg_hba.conf',
      ['local all all trust', 'host all all 127.0.0.1/32 trust', 'local replication all trust', 'host replication all 127.0.0.1/32 trust', ''].join('\n'),
    );
    appendFileSync(
      node.dataDir + '/postgresql.conf',
      settingLines({
        listen_addresses: "'127.0.0.1'",
        port: node.port,
        unix_socket_directories: `'${this.#root}'`,
        fsync: 'on',
        wal_level: 'replica',
        max_wal_senders: 10,
        wal_keep_size: "'256MB'",
        hot_standby: 'on',
        synchronous_commit: 'on',
        // Empty until the standby streams (rebuildStandby sets it): nothing commits before then.
        synchronous_standby_names: "''",
        max_connections: 200,
        ...settings,
      }),
    );
    await this.#pgCtl(node, ['start', '-w', '-t', String(commandTimeoutMs / 1000), '-l', node.logFile]);
    node.role = 'primary';
    this.#primary = node;
  }

  async #newNode(): Promise<PgNode> {
    const name = `node${this.#nodes.length + 1}`;
    const dir = ownedDirectory(join(this.#root, name));
    const node: PgNode = { name, port: await freePort(), dataDir: join(dir, 'data'), logFile: join(dir, 'postgres.log'), role: 'stopped' };
    this.#nodes.push(node);
    return node;
  }

  #pgCtl(node: PgNode, args: string[]): Promise<string> {
    return this.#run('pg_ctl', ['-D', node.dataDir, ...args]);
  }

  /** Runs a PostgreSQL binary as the postgres user; rejects with its output when it fails. */
  #run(binary: string, args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile('runuser', ['-u', osUser, '--', join(this.#bin, binary), ...args], { cwd: this.#root, timeout: commandTimeoutMs }, (error, stdout, stderr) => {
        if (error) reject(new Error(`${binary} ${args.join(' ')} failed: ${error.message}\n${stdout}${stderr}`, { cause: error }));
        else resolve(stdout);
      });
    });
  }
}

function settingLines(settings: Record<string, string | number>): string {
  return '\n' + Object.entries(settings).map(([name, value]) => `${name} = ${value}`).join('\n') + '\n';
}

/** A directory the postgres user owns, private to it (initdb insists on 0700 data directories). */
function ownedDirectory(path: string): string {
  const owner = postgresUid();
  if (!owner) throw new Error(`no ${osUser} user`);
  mkdirSync(path, { recursive: true });
  chownSync(path, owner.uid, owner.gid);
  chmodSync(path, 0o700);
  return path;
}

function postmasterPid(node: PgNode): number | undefined {
  try {
    const pid = Number(readFileSync(join(node.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie waiting to be reaped (the postmaster's parent is init). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The postmaster's children (each in a session of its own, so not reachable by a group kill). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

/** Freezes the postmaster and its children, then kills them all: nothing runs after the moment of death. */
function killTree(pid: number | undefined): void {
  if (pid === undefined) return;
  const pids = [pid, ...childrenOf(pid)];
  for (const each of pids) signal(each, 'SIGSTOP');
  for (const each of pids) signal(each, 'SIGKILL');
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // Already gone.
  }
}

/** A test that crashes or is interrupted must not leave postgres processes and directories behind. */
function installSafetyNet(): void {
  if (safetyNetInstalled) return;
  safetyNetInstalled = true;
  const killAll = () => {
    for (const cluster of live) cluster.killNow();
  };
  process.on('exit', killAll);
  for (const name of ['SIGINT', 'SIGTERM'] as const) {
    process.once(name, () => {
      killAll();
      // The default action, now that the clusters are gone.
      process.kill(process.pid, name);
    });
  }
}
