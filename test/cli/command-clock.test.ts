/**
 * Issue 43 item 2, the CLI's part: time is a parameter. Every `coregate` command reads the time
 * from the clock its program is handed (CommandIo.clock, src/cli/command-io.ts; the process hands
 * the system's), never the wall clock: run here on a fake clock set years away from today, each
 * date, not-before and signature time a command writes or prints is the fake clock's.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { after, test } from 'node:test';
import { decodeJwt } from 'jose';
import { runCommand } from '../../src/cli/run-command.js';
import { FakeClock } from '../helpers/fake-clock.js';

/** Far from the real time, so that a command that read the wall clock could not match it by chance. */
const fakeNowMs = Date.parse('2031-05-06T07:08:09.000Z');
const fakeNowSeconds = Math.floor(fakeNowMs / 1000);
const dir = mkdtempSync(join(tmpdir(), 'coregate-command-clock-'));
const db = ['--db', `sqlite:${join(dir, 'clock.db')}`];
after(() => rmSync(dir, { recursive: true, force: true }));

class Captured extends Writable {
  text = '';
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.text += chunk.toString('utf8');
    callback();
  }
}

/** Runs `coregate ...args` in this process on the fake clock; answers its standard output, failing on a non-zero exit. */
async function onFakeClock(args: string[]): Promise<string> {
  const stdout = new Captured();
  const stderr = new Captured();
  const io = { env: { ...process.env, COREGATE_MASTER_KEY: '' }, stdout, stderr, stdin: new PassThrough(), clock: new FakeClock(fakeNowMs) };
  const outcome = await runCommand(args, io);
  assert.equal(outcome.exitCode, 0, `coregate ${args.join(' ')}: exit ${outcome.exitCode}: ${stderr.text}`);
  return stdout.text;
}

const json = async <T>(args: string[]): Promise<T> => JSON.parse(await onFakeClock([...args, ...db, '--json'])) as T;

test('issue 43 item 2: the operator commands on the store stamp and compare with the clock the program is handed', async () => {
  await json(['realms', 'add', '--realm', 'clocked']);
  const keys = await json<Array<{ createdAt: string }>>(['keys', 'list', '--realm', 'clocked']);
  assert.deepEqual(keys.map((key) => key.createdAt), [new Date(fakeNowMs).toISOString()], 'the realm\'s first signing key is made at the fake time');

  const revoked = await json<{ notBefore: number }>(['realms', 'revoke-tokens', '--realm', 'clocked']);
  assert.equal(revoked.notBefore, fakeNowSeconds + 1, 'the realm\'s not-before: the first whole second after the fake now');

  await json(['clients', 'create', '--realm', 'clocked', '--client-id', 'clocked-app', '--scopes', 'termDeposit:retrieve']);
  const clients = await json<Array<{ clientId: string; createdAt: string }>>(['clients', 'list', '--realm', 'clocked']);
  assert.equal(clients.find((client) => client.clientId === 'clocked-app')?.createdAt, new Date(fakeNowMs).toISOString());
  const clientRevoked = await json<{ tokensNotBefore: number }>(['clients', 'revoke-tokens', '--realm', 'clocked', '--client-id', 'clocked-app']);
  assert.ok(clientRevoked.tokensNotBefore > fakeNowSeconds && clientRevoked.tokensNotBefore <= fakeNowSeconds + 1, `client not-before ${clientRevoked.tokensNotBefore} follows the fake now ${fakeNowSeconds}`);

  const login = await json<{ expiresAt: string }>(['console']);
  assert.equal(login.expiresAt, new Date(fakeNowMs + 10 * 60_000).toISOString(), 'the console login URL works for 10 minutes of the fake clock');
});

test('issue 43 item 2: fapi assertion and fapi proof are issued at the time of the clock the program is handed', async () => {
  const file = join(dir, 'client-key.pem');
  writeFileSync(file, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const assertion = (await onFakeClock(['fapi', 'assertion', '--private-key', file, '--client-id', 'clocked-app'])).trim();
  assert.equal(decodeJwt(assertion).iat, fakeNowSeconds);
  const proof = (await onFakeClock(['fapi', 'proof', '--key', file, '--method', 'GET', '--url', 'https://bank.example/api/v1/x'])).trim();
  assert.equal(decodeJwt(proof).iat, fakeNowSeconds);
});
