/**
 * `coregate clients create --jwks FILE` takes a JWK set, one JWK or a PEM public key
 * (src/cli/key-file.ts), and its help says so, as docs/auth.md's onboarding does: each form the
 * help names is read, and a form it did not name would not have been offered to an engineer who
 * holds only a PEM key.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { readPublicKeys } from '../../src/cli/key-file.js';
import { runCli } from '../helpers/cli.js';
import { tempDirectory } from '../helpers/data-files.js';
import { repoRoot } from '../helpers/repo-root.js';

test('clients create --help says --jwks takes a JWK set, one JWK or a PEM public key; each is read; docs/auth.md says the same', async () => {
  const help = await runCli(['clients', 'create', '--help']);
  assert.equal(help.code, 0, help.stderr);
  const jwks = (/--jwks <file>([\s\S]*?)\n {2}--/.exec(help.stdout)?.[1] ?? '').replace(/\s+/g, ' ');
  assert.match(jwks, /JWK set/);
  assert.match(jwks, /one JWK/);
  assert.match(jwks, /PEM public key/);

  const dir = tempDirectory('coregate-jwks-help-');
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'ES256', use: 'sig' };
  const files = {
    set: [join(dir, 'set.json'), JSON.stringify({ keys: [jwk] })],
    one: [join(dir, 'one.json'), JSON.stringify(jwk)],
    pem: [join(dir, 'key.pem'), publicKey.export({ format: 'pem', type: 'spki' }).toString()],
  } as const;
  for (const [file, text] of Object.values(files)) writeFileSync(file, text);
  for (const [file] of Object.values(files)) assert.equal(readPublicKeys('--jwks', file).keys.length, 1, file);

  const auth = readFileSync(join(repoRoot, 'docs/auth.md'), 'utf8');
  assert.match(auth, /`--jwks FILE` \(a JWK set, a JWK, or a PEM public key/);
});
