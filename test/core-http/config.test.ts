/** Settings of a remote core: the API's --core-url and `coregate core serve`'s own (flags win over environment, then defaults). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveConfig } from '../../src/config.js';
import { resolveCoreServiceConfig } from '../../src/core-http/core-config.js';

test('--core-url / COREGATE_CORE_URL names a remote core; absent, the core is embedded; not an http(s) URL, the start stops naming the setting', () => {
  assert.equal(resolveConfig({}, {}).coreUrl, undefined);
  assert.equal(resolveConfig({}, { COREGATE_CORE_URL: 'http://core.internal:8081' }).coreUrl, 'http://core.internal:8081');
  assert.equal(resolveConfig({ coreUrl: 'https://core.bank:443/prefix' }, { COREGATE_CORE_URL: 'http://ignored' }).coreUrl, 'https://core.bank:443/prefix');
  assert.throws(() => resolveConfig({ coreUrl: 'core.internal:8081' }, {}), /--core-url \/ COREGATE_CORE_URL/);
  assert.throws(() => resolveConfig({}, { COREGATE_CORE_URL: 'ftp://core' }), /--core-url \/ COREGATE_CORE_URL/);
});

test('coregate core serve: defaults (port 8081, localhost, its own sqlite:./data/core.db), flags over COREGATE_CORE_* variables, bad values named', () => {
  const defaults = resolveCoreServiceConfig({}, {});
  assert.deepEqual(
    { port: defaults.port, host: defaults.host, db: defaults.db, dataFile: defaults.dataFile, businessDate: defaults.businessDate },
    { port: 8081, host: 'localhost', db: 'sqlite:./data/core.db', dataFile: undefined, businessDate: undefined },
  );
  const env = { COREGATE_CORE_PORT: '9000', COREGATE_CORE_DB: 'postgres://core@db/core', COREGATE_CORE_DATA: 'bank.json', COREGATE_CORE_BUSINESS_DATE: '2026-03-02', COREGATE_DB: 'sqlite:api.db' };
  const fromEnv = resolveCoreServiceConfig({}, env);
  assert.deepEqual([fromEnv.port, fromEnv.db, fromEnv.dataFile, fromEnv.businessDate], [9000, 'postgres://core@db/core', 'bank.json', '2026-03-02'], 'the API\'s COREGATE_DB is not the core\'s');
  assert.equal(resolveCoreServiceConfig({ port: '9100', db: 'sqlite:/tmp/core.db' }, env).port, 9100);
  assert.throws(() => resolveCoreServiceConfig({ port: 'http' }, {}), /--port \/ COREGATE_CORE_PORT/);
  assert.throws(() => resolveCoreServiceConfig({ db: 'mysql://x' }, {}), /--db \/ COREGATE_CORE_DB/);
  assert.throws(() => resolveCoreServiceConfig({ businessDate: '2026-13-01' }, {}), /--business-date \/ COREGATE_CORE_BUSINESS_DATE/);
});
