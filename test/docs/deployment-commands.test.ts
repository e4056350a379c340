/**
 * docs/deployment.md: every `npx coregate` line of its shell blocks is run here, with the guide's
 * hosts replaced by local ones (fresh PostgreSQL databases, the local Redis, a core started from the
 * guide's own `core serve` line, a certificate made for the test). A server line must become
 * ready; any other command must exit 0. A new command in the guide that this test cannot run
 * fails it, so the guide stays true.
 */
// @lane process: starts coregate processes (docs/testing.md, "Lanes")
// @starts-early: among the slowest files of a quiet run
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/cli.js';
import { freePort, spawnCoregate, type CoregateProcess } from '../helpers/processes.js';
import { deleteKeysUnder, randomKeyPrefix, redisSkip, redisTestUrl } from '../helpers/redis.js';
import { demoDataFile } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';
import { repoRoot } from '../helpers/repo-root.js';

const guide = readFileSync(join(repoRoot, 'docs/deployment.md'), 'utf8');

/** The guide's shell lines, in order: `export NAME=value` and `npx coregate ...`. */
function shellLines(markdown: string): string[] {
  const lines: string[] = [];
  for (const block of markdown.matchAll(/```sh\n([\s\S]*?)```/g)) {
    for (const raw of (block[1] ?? '').split('\n')) {
      const line = raw.replace(/\s+#.*$/, '').trim();
      if (line.startsWith('npx coregate ') || line.startsWith('export ')) lines.push(line);
    }
  }
  return lines;
}

const postgres = storeTargets.find((target) => target.name === 'postgres');
const skip = postgres?.skip ?? redisSkip;

describe('docs/deployment.md: every command runs', { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'coregate-deployment-'));
  const drops: Array<() => Promise<void>> = [];
  const running: CoregateProcess[] = [];
  const keyPrefix = randomKeyPrefix();
  let apiDb = '';
  let coreDb = '';
  before(async () => {
    if (!postgres) throw new Error('no PostgreSQL target');
    const api = await postgres.create();
    const core = await postgres.create();
    drops.push(api.drop, core.drop);
    apiDb = api.url;
    coreDb = core.url;
  });
  after(async () => {
    for (const process of running) await process.stop('SIGKILL');
    for (const drop of drops) await drop();
    await deleteKeysUnder(redisTestUrl, keyPrefix);
    rmSync(dir, { recursive: true, force: true });
  });

  test('the guide\'s shell lines run in order: servers become ready, commands exit 0', { timeout: 240_000 }, async () => {
    const certFile = join(dir, 'tls.crt');
    const keyFile = join(dir, 'tls.key');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', keyFile, '-out', certFile], { stdio: 'ignore' });
    let corePort = 0;
    const local = (line: string): string =>
      line
        .replace('postgres://coregate:secret@db.internal:5432/coregate', apiDb)
        .replace('postgres://core:secret@core-db.internal:5432/core', coreDb)
        .replace('redis://redis.internal:6379', redisTestUrl)
        .replace('http://core.internal:9090', `http://127.0.0.1:${corePort}`)
        .replace('/etc/coregate/tls.crt', certFile)
        .replace('/etc/coregate/tls.key', keyFile)
        .replace(/(^|\s)bank\.json\b/, `$1${demoDataFile}`);
    const env: Record<string, string> = { COREGATE_REDIS_KEY_PREFIX: keyPrefix, COREGATE_LOG_LEVEL: 'info' };
    const lines = shellLines(guide);
    assert.ok(lines.filter((line) => line.startsWith('npx coregate')).length >= 8, 'the guide has its commands');
    for (const line of lines) {
      if (line.startsWith('export ')) {
        const match = /^export (\w+)=(.*)$/.exec(line);
        assert.ok(match?.[1] && match[2] !== undefined, `an export the test understands: ${line}`);
        const value = match[2].replace(/^"|"$/g, '');
        env[match[1]] = value === '$(openssl rand -base64 32)' ? randomBytes(32).toString('base64') : local(value);
        continue;
      }
      const words = local(line).replace(/^npx coregate /, '').split(/\s+/);
      const isServer = words[0] === 'serve' || (words[0] === 'core' && words[1] === 'serve');
      if (!isServer) {
        const result = await runCli(words, { env: { ...process.env, ...env }, timeoutMs: 60_000 });
        assert.equal(result.code, 0, `${line}\n${result.stdout}${result.stderr}`);
        continue;
      }
      // The test picks the ports (and binds to loopback): the guide's --host and --port are dropped.
      const args: string[] = [];
      for (let index = 0; index < words.length; index += 1) {
        const word = words[index] ?? '';
        if (word === '--host' || word === '--port') index += 1;
        else if (word === '--metrics-port') {
          args.push(word, String(await freePort()));
          index += 1;
        } else args.push(word);
      }
      const port = await freePort();
      if (words[0] === 'core') corePort = port;
      const server = await spawnCoregate(args, { port, env, readyLog: args.includes('--tls-cert') ? 'coregate listening' : undefined });
      if (words[0] === 'core') {
        running.push(server);
        continue;
      }
      const { code, signal } = await server.stop('SIGTERM');
      assert.equal(signal, null, line);
      assert.equal(code, 0, `${line}\n${server.output().stderr}`);
    }
    assert.ok(corePort > 0, 'the guide starts a remote core');
  });
});
