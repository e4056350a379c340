/**
 * Nothing unaudited in an outage (docs/api.md "Audit"): an instance in this process on
 * PostgreSQL behind a TCP proxy (test/helpers/tcp-proxy.ts) whose connections are cut and refused,
 * so that every write of the store fails as an outage, as a failover does. The refusals answered
 * meanwhile — the 503 of the outage itself, and a 400 — are kept in the audit spool
 * (src/audit/audit-spool.ts), shown by the metrics; once the database answers again the spool's
 * drain, driven one pass at a time on a fake clock, appends them to the chain, in order, and
 * `coregate audit verify` passes. A full spool makes readiness answer 503 naming it, and counts the
 * record it lost.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, describe, test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { startCoregate, type Coregate, type StartOptions } from '../../src/main.js';
import { exportAudit } from '../../src/audit/chain.js';
import type { ChainedAuditEntry } from '../../src/store/audit.js';
import { depositBody } from '../helpers/bodies.js';
import { runCli } from '../helpers/cli.js';
import { tempDirectory } from '../helpers/data-files.js';
import { FakeClock } from '../helpers/fake-clock.js';
import { initiatePath } from '../helpers/http.js';
import { parseSamples, valueOf } from '../helpers/metrics.js';
import { demo, demoDataFile, postForm } from '../helpers/server.js';
import { runSigningKeys } from '../helpers/signing-keys.js';
import { storeTargets, withStore } from '../helpers/stores.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const postgres = storeTargets.find((target) => target.name === 'postgres');
const root = tempDirectory('coregate-spool-outage-');

interface Instance {
  coregate: Coregate;
  clock: FakeClock;
  proxy: TcpProxy;
  dbUrl: string;
  spoolDirectory: string;
  logLines: string[];
  token: string;
  close(): Promise<void>;
}

const instances: Instance[] = [];
after(async () => {
  for (const instance of instances) await instance.close();
});

/** An instance on a new PostgreSQL database reached through a proxy of the test's own; a token, and one deposit to warm its caches. */
async function startInstance(name: string, options: Pick<StartOptions, 'auditSpoolBounds'> = {}): Promise<Instance> {
  if (!postgres) throw new Error('no PostgreSQL target');
  const created = await postgres.create();
  const target = new URL(created.url);
  const proxy = await TcpProxy.start(Number(target.port || 5432));
  const proxied = new URL(created.url);
  proxied.port = String(proxy.port);
  const clock = new FakeClock();
  const logLines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, callback) {
      logLines.push(...String(chunk).split('\n').filter((line) => line !== ''));
      callback();
    },
  });
  const spoolDirectory = join(root, name);
  const config = resolveConfig({ port: '0', host: '127.0.0.1', db: proxied.toString(), data: demoDataFile, auditSpool: spoolDirectory }, {});
  const coregate = await startCoregate(config, { clock, log: { destination, level: 'info' }, signingKeys: runSigningKeys, ...options });
  const closing = async () => {
    await coregate.close();
    await proxy.close();
    await created.drop();
  };
  const answer = await postForm(`${coregate.url}/realms/${demo.realm}/protocol/openid-connect/token`, {
    grant_type: 'client_credentials',
    client_id: demo.treasury.clientId,
    client_secret: demo.treasury.secret,
  });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  const instance: Instance = { coregate, clock, proxy, dbUrl: created.url, spoolDirectory, logLines, token: answer.body.access_token as string, close: closing };
  instances.push(instance);
  // The token is verified and the realm read once, before the outage: the fake clock stands
  // still, so they stay fresh and the requests below pass authentication without the database.
  const warmUp = await initiate(instance, randomUUID(), depositBody(1000));
  assert.equal(warmUp.status, 200, JSON.stringify(warmUp.body));
  return instance;
}

async function initiate(instance: Instance, correlationId: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${instance.coregate.url}${initiatePath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${instance.token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Every connection cut, new ones refused: the address points nowhere (a failover under way). */
function cutDatabase(instance: Instance): void {
  instance.proxy.pause('refuse');
  instance.proxy.cutAll('reset');
}

async function readiness(instance: Instance): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${instance.coregate.url}/health/ready`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function metricValues(instance: Instance) {
  const samples = parseSamples(await (await fetch(instance.coregate.metricsUrl)).text());
  return {
    records: valueOf(samples, 'coregate_audit_spool_records'),
    bytes: valueOf(samples, 'coregate_audit_spool_bytes'),
    ageSeconds: valueOf(samples, 'coregate_audit_spool_oldest_record_age_seconds'),
    lostFull: valueOf(samples, 'coregate_audit_records_lost_total', { reason: 'spool_full' }),
  };
}

async function auditTrail(dbUrl: string): Promise<ChainedAuditEntry[]> {
  return withStore(dbUrl, async (store) => {
    const entries: ChainedAuditEntry[] = [];
    for await (const entry of exportAudit(store)) entries.push(entry);
    return entries;
  });
}

const spoolFiles = (directory: string) => readdirSync(directory).filter((name) => name.endsWith('.jsonl'));

describe('refusals answered during a database outage are audited', { skip: postgres?.skip }, () => {
  test('the 503 of the outage and a 400 are kept in the spool (metrics show it), then appended to the chain in order once the database is back; audit verify passes', async () => {
    const instance = await startInstance('drained');
    const { coregate, clock } = instance;
    cutDatabase(instance);

    const unavailableId = `outage-503-${randomUUID()}`;
    const unavailable = await initiate(instance, unavailableId, depositBody(1000));
    assert.equal(unavailable.status, 503, JSON.stringify(unavailable.body));
    // The 503 is answered without waiting for its audit record: this waits for the write (to the spool, since the database is gone).
    await coregate.background.refusalAudit.idle();
    const outageLine = instance.logLines
      .map((line) => JSON.parse(line) as { msg?: string; correlationId?: string; refusalAudited?: boolean; level?: number })
      .find((line) => line.msg === 'business API request met a database outage' && line.correlationId === unavailableId);
    assert.deepEqual({ level: outageLine?.level, refusalAudited: outageLine?.refusalAudited }, { level: 40, refusalAudited: true }, 'the warning names the 503\'s correlation id and says it is audited');
    const refusedId = `outage-400-${randomUUID()}`;
    const refused = await initiate(instance, refusedId, depositBody(0));
    assert.equal(refused.status, 400, 'a refusal is answered once its record is kept, in the spool while the database is down');

    clock.advance(5_000);
    const during = await metricValues(instance);
    assert.equal(during.records, 2);
    assert.ok((during.bytes ?? 0) > 0);
    assert.equal(during.ageSeconds, 5, 'the oldest record was recorded 5 s ago (the fake clock)');
    assert.equal(during.lostFull, 0);
    assert.equal(spoolFiles(instance.spoolDirectory).length, 1);
    const notReady = await readiness(instance);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.check, 'store', 'the spool has room: readiness names the database');

    // The drain tries while the database is still down: nothing moves, nothing is lost.
    await coregate.background.auditSpool?.runOnce();
    assert.equal((await metricValues(instance)).records, 2);

    instance.proxy.resume();
    // Back, but the spool still holds records: a new refusal goes behind them, not ahead.
    const afterId = `after-400-${randomUUID()}`;
    assert.equal((await initiate(instance, afterId, depositBody(0))).status, 400);
    assert.equal((await metricValues(instance)).records, 3);

    await coregate.background.auditSpool?.runOnce();
    await coregate.background.auditChainer.idle();
    const trail = await auditTrail(instance.dbUrl);
    const ours = trail.filter((entry) => [unavailableId, refusedId, afterId].includes(entry.correlationId ?? ''));
    assert.deepEqual(
      ours.map((entry) => [entry.correlationId, entry.httpStatus, entry.outcome]),
      [
        [unavailableId, 503, 'Refused'],
        [refusedId, 400, 'Refused'],
        [afterId, 400, 'Refused'],
      ],
      'each once, chained in the order they were answered',
    );
    assert.ok(ours.every((entry) => entry.chainSeq !== null));
    const verify = await runCli(['audit', 'verify', '--db', instance.dbUrl]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const drained = await metricValues(instance);
    assert.deepEqual({ records: drained.records, bytes: drained.bytes, ageSeconds: drained.ageSeconds }, { records: 0, bytes: 0, ageSeconds: 0 });
    assert.deepEqual(spoolFiles(instance.spoolDirectory), []);
    assert.equal((await readiness(instance)).status, 200);
    // And once empty, refusals go to the database again, chained as they are written.
    const directId = `direct-400-${randomUUID()}`;
    assert.equal((await initiate(instance, directId, depositBody(0))).status, 400);
    assert.equal((await metricValues(instance)).records, 0);
    assert.ok((await auditTrail(instance.dbUrl)).some((entry) => entry.correlationId === directId && entry.chainSeq !== null));
    assert.ok(!instance.logLines.some((line) => line.includes('could not be written')), 'no record was lost');
  });

  test('a full spool: the record that does not fit is lost, logged at error level and counted; readiness answers 503 naming the audit spool until the drain frees it', async () => {
    const instance = await startInstance('full', { auditSpoolBounds: { recordsMax: 2 } });
    const { coregate } = instance;
    cutDatabase(instance);
    const kept = [`full-400-a-${randomUUID()}`, `full-400-b-${randomUUID()}`];
    for (const id of kept) assert.equal((await initiate(instance, id, depositBody(0))).status, 400);
    const lostId = `full-lost-${randomUUID()}`;
    const lost = await initiate(instance, lostId, depositBody(0));
    assert.equal(lost.status, 503, 'a refusal that cannot be audited is not answered as if it were: 503, repeat later');
    const metrics = await metricValues(instance);
    assert.equal(metrics.records, 2);
    assert.equal(metrics.lostFull, 1, 'the lost record counted once (its request is not audited a second time)');
    const errorLines = instance.logLines.filter((line) => line.includes('"level":50') && line.includes('could not be written'));
    assert.equal(errorLines.length, 1, instance.logLines.slice(-10).join('\n'));
    assert.ok(errorLines.some((line) => line.includes('AuditSpoolFull')), instance.logLines.slice(-10).join('\n'));
    const notReady = await readiness(instance);
    assert.equal(notReady.status, 503);
    assert.equal(notReady.body.check, 'audit_spool');
    assert.match(String(notReady.body.reason), /^audit_spool is full/);

    instance.proxy.resume();
    assert.equal((await readiness(instance)).status, 503, 'still full until drained');
    await coregate.background.auditSpool?.runOnce();
    await coregate.background.auditChainer.idle();
    assert.equal((await readiness(instance)).status, 200);
    const trail = await auditTrail(instance.dbUrl);
    assert.deepEqual(trail.filter((entry) => kept.includes(entry.correlationId ?? '')).map((entry) => entry.correlationId), kept);
    assert.ok(!trail.some((entry) => entry.correlationId === lostId));
    const verify = await runCli(['audit', 'verify', '--db', instance.dbUrl]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
  });
});
