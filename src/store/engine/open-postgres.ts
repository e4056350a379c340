/** A PostgreSQL database (open-database.ts): a pg pool in pipeline mode behind the engine's dialect. */
import pg from 'pg';
import type { Database } from './database.js';
import { RootQueries } from './root-queries.js';
import { PipelinedPostgresDialect } from './postgres-driver.js';

/** Connections in one instance's PostgreSQL pool. */
const postgresPoolSizeMax = 20;
/**
 * How long a caller may wait for a PostgreSQL connection (pg waits forever by default): for a new
 * one to be made, since an address that swallows packets during a failover must not hold requests
 * for minutes, and, pg-pool applying the same bound, for one of the pool's to be released when all
 * `postgresPoolSizeMax` are in use ("timeout exceeded when trying to connect"). Both time-outs are
 * outages (database-unavailable.ts): the request is answered 503, and a readiness probe that
 * waited so long fails, under a saturated pool as under a failover.
 */
const postgresConnectTimeoutMs = 5_000;
/** TCP keep-alive on PostgreSQL connections: a peer that vanished without closing is found. */
const postgresKeepAliveInitialDelayMs = 10_000;

/** `displayUrl`: the URL without its password. */
export function openPostgres<DB>(url: string, displayUrl: string): Database<DB> {
  // Pipeline mode: statements are sent without waiting for the answer to the one before (postgres-driver.ts).
  const pool = new pg.Pool({
    connectionString: url,
    max: postgresPoolSizeMax,
    pipeline: true,
    connectionTimeoutMillis: postgresConnectTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: postgresKeepAliveInitialDelayMs,
  } as pg.PoolConfig);
  // An idle client's error (server restart) must not crash the process; the next query reports
  // it. A client in use has its own listener (postgres-driver.ts, ServerSessions).
  pool.on('error', () => {});
  const dialect = new PipelinedPostgresDialect(pool);
  const db = new RootQueries<DB>(dialect);
  return {
    db,
    transaction: (work) => db.inUnitOfWork(work),
    dialect: 'postgres',
    displayUrl,
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    ping: () => dialect.probeWritable(),
    close: () => db.destroy(),
  };
}
