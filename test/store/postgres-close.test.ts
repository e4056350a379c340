/**
 * Closing a PostgreSQL store answers once its server sessions are gone (src/store/engine/postgres-driver.ts,
 * ServerSessions): pg-pool's own end() answers before its clients have closed their sockets, so
 * a refused start or a CLI command could leave sessions behind its answer.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { openStore } from '../../src/store/connect.js';
import { postgresAdminUrl, storeTargets, withCreatedStore } from '../helpers/stores.js';

const postgres = storeTargets.find((target) => target.name === 'postgres')!;

test('a closed PostgreSQL store has no session left on the server, every time (several clients in use, 20 closes)', { skip: postgres.skip }, async () => {
  await withCreatedStore(postgres, async (url) => {
    const database = new URL(url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    try {
      const sessions = async () =>
        Number((await admin.query<{ count: string }>('select count(*) as count from pg_stat_activity where datname = $1', [database])).rows[0]?.count);
      for (let round = 1; round <= 20; round += 1) {
        const store = await openStore(url);
        // Three transactions at once hold three clients of the pool.
        await Promise.all([1, 2, 3].map(() => store.transaction((trx) => trx.selectNoFrom((eb) => eb.val(round).as('round')).execute())));
        await store.close();
        assert.equal(await sessions(), 0, `round ${round}: the closed store left sessions on the server`);
      }
    } finally {
      await admin.end();
    }
  });
});
