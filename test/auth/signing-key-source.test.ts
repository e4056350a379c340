/**
 * Where a realm's new signing keys come from (src/auth/signing-key-source.ts): the source the
 * wiring hands in (StartOptions.signingKeys) makes a new store's first realm key, and the test
 * suite's source (test/helpers/signing-keys.ts) gives other RSA key material on each call.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { exportJWK } from 'jose';
import { freshSigningKeys, type SigningKeySource } from '../../src/auth/signing-key-source.js';
import { resolveConfig } from '../../src/config.js';
import { startCoregate } from '../../src/main.js';
import { tempDirectory } from '../helpers/data-files.js';
import { demo, demoDataFile } from '../helpers/server.js';
import { runSigningKeys } from '../helpers/signing-keys.js';

test('a new store\'s realm key comes from the source handed in (StartOptions.signingKeys), published in the realm\'s JWKS', async () => {
  const made = await freshSigningKeys('RS256');
  const asked: string[] = [];
  const source: SigningKeySource = async (alg) => {
    asked.push(alg);
    return made;
  };
  const db = `sqlite:${join(tempDirectory('coregate-key-source-'), 'coregate.db')}`;
  const quiet = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const coregate = await startCoregate(resolveConfig({ port: '0', host: '127.0.0.1', db, data: demoDataFile }, {}), { log: { destination: quiet }, signingKeys: source });
  try {
    assert.deepEqual(asked, ['RS256'], 'one key, for the demo realm (RS256)');
    const jwks = (await (await fetch(`${coregate.url}/realms/${demo.realm}/protocol/openid-connect/certs`)).json()) as { keys: { n?: string }[] };
    assert.deepEqual(jwks.keys.map((key) => key.n), [(await exportJWK(made.publicKey)).n]);
  } finally {
    await coregate.close();
  }
});

test('the test suite\'s source: RS256 key material differs from one call to the next, other algorithms are fresh', async () => {
  const modulus = async (source: SigningKeySource) => (await exportJWK((await source('RS256')).publicKey)).n;
  const first = await modulus(runSigningKeys);
  const second = await modulus(runSigningKeys);
  assert.notEqual(first, second);
  const es = [await runSigningKeys('ES256'), await runSigningKeys('ES256')];
  assert.notEqual((await exportJWK(es[0]!.publicKey)).x, (await exportJWK(es[1]!.publicKey)).x);
});
