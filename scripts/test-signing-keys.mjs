// The run's RSA signing keys (docs/testing.md): a few key pairs made once per run and handed, as
// private JWKs in a file of the run's own directory, to the test files' in-process servers as the
// source of a new realm's first key (test/helpers/signing-keys.ts). An RSA key pair costs ~0.25 s
// of CPU to generate, and each new store's sandbox realm needed one: some 400 a run.
import { generateKeyPair } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

/** How many: enough that a realm rotated in a test gets other key material than it had. */
const poolSize = 4;

/** Writes the keys in `dir` (0600); answers the environment that names the file. */
export async function makeSigningKeys(dir) {
  const pairs = await Promise.all(Array.from({ length: poolSize }, () => promisify(generateKeyPair)('rsa', { modulusLength: 2048, publicExponent: 0x10001 })));
  const file = join(dir, 'signing-keys.json');
  writeFileSync(file, JSON.stringify(pairs.map(({ privateKey }) => privateKey.export({ format: 'jwk' }))), { mode: 0o600 });
  return { COREGATE_TEST_SIGNING_KEYS: file };
}
