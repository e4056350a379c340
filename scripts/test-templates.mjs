// The run's migrated template stores (docs/testing.md): one PostgreSQL database and one SQLite file,
// migrated once per run by test/helpers/migrate-template.ts (compiled: scripts/test.mjs builds first); test/helpers/stores.ts copies them for
// each suite. Names carry the run's id (its start, in seconds since the epoch, and a random part),
// so that two runs at once on one machine never share one, and a run drops what runs over an hour
// old left behind (a run killed before it could clean up): never a younger run's, which may still
// be going.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pg from 'pg';

const postgresAdminUrl = process.env.COREGATE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const staleAfterSeconds = 3600;

/** A new run id: `<seconds since the epoch>_<random hex>`. */
export function newRunId() {
  return `${Math.floor(Date.now() / 1000)}_${randomBytes(3).toString('hex')}`;
}

async function withAdmin(work) {
  const client = new pg.Client({ connectionString: postgresAdminUrl, connectionTimeoutMillis: 15_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Makes the run's templates in `dir`; answers the environment the test files need to find them
 * (COREGATE_TEST_RUN_ID, COREGATE_TEST_SQLITE_TEMPLATE, COREGATE_TEST_PG_TEMPLATE) and how to drop
 * them. Without a PostgreSQL server there is no PostgreSQL template: the stores' helper skips or,
 * under CI=true, fails those suites with its own message.
 */
export async function prepareTemplates(runId, dir) {
  const env = { COREGATE_TEST_RUN_ID: runId, COREGATE_TEST_SQLITE_TEMPLATE: join(dir, 'template.db') };
  const urls = [`sqlite:${env.COREGATE_TEST_SQLITE_TEMPLATE}`];
  const pgName = `coregate_test_template_${runId}`;
  let pgCreated = false;
  try {
    await withAdmin(async (client) => {
      await dropStale(client);
      await client.query(`create database ${pgName}`);
    });
    pgCreated = true;
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${pgName}`;
    urls.push(url.toString());
  } catch (error) {
    console.warn(`# no PostgreSQL template (${error.message}): PostgreSQL suites start from empty databases, or skip`);
  }
  const migrate = await new Promise((resolve) => {
    spawn(process.execPath, ['dist/test/helpers/migrate-template.js', ...urls], { stdio: 'inherit' }).on('close', (status) => resolve({ status }));
  });
  if (migrate.status !== 0) {
    if (pgCreated) await dropDatabase(pgName).catch(() => {});
    throw new Error('migrating the template stores failed (see above)');
  }
  if (pgCreated) {
    // Nothing may connect to a template while it is copied: a connection refused is a clear error
    // where a connected session would make every copy fail with 55006.
    await withAdmin((client) => client.query(`alter database ${pgName} with allow_connections false`));
    env.COREGATE_TEST_PG_TEMPLATE = pgName;
  }
  return { env, drop: async () => (pgCreated ? dropDatabase(pgName) : undefined) };
}

async function dropDatabase(name) {
  await withAdmin((client) => client.query(`drop database if exists ${name} with (force)`));
}

/** Drops the templates and suite databases of runs that started over an hour ago. */
async function dropStale(client) {
  const { rows } = await client.query(String.raw`select datname from pg_database where datname ~ '^coregate_test_(template_|r)\d{10}_'`);
  const now = Date.now() / 1000;
  for (const { datname } of rows) {
    const started = Number(/^coregate_test_(?:template_|r)(\d{10})_/.exec(datname)?.[1]);
    if (now - started > staleAfterSeconds) await client.query(`drop database if exists ${datname} with (force)`).catch(() => {});
  }
}
