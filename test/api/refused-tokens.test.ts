/**
 * Refused tokens kept in memory (src/cache/verified-tokens.ts, refusedTokensMax): a token refused
 * for a reason of its own (a forged signature, expired, another audience) is refused again with the
 * same message and without its signature being checked again; a refusal that depends on the realm's
 * state or on time still to come is decided afresh every time (docs/deployment.md, "What an
 * instance keeps in memory"). The verifier is built alone, with a keyring and a snapshot that count
 * their reads: a read of the realm's published keys is a verification the cache did not spare.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { TokenRejected, TokenVerifier } from '../../src/api/bearer-auth.js';
import { FakeClock } from '../helpers/fake-clock.js';

const publicUrl = 'https://coregate.test';
const issuer = `${publicUrl}/realms/bank`;
const audience = 'coregate-api';

async function fixture() {
  const clock = new FakeClock();
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const keys = [{ kid: 'k1', alg: 'RS256', publicJwk: await exportJWK(publicKey), publicKey, retiredAt: null }];
  const realm = { name: 'bank', key_generation: 1, not_before: 0 };
  let keyReads = 0;
  const keyring = {
    async publishedKeys() {
      keyReads += 1;
      return keys;
    },
  };
  const client = { realm: 'bank', clientId: 'app', enabled: true, tokensNotBefore: 0 };
  const snapshot = { realm: async () => realm, peekRealm: () => ({ value: realm }), client: async () => client, clientBeforeRefusal: async () => client, peekClient: () => ({ value: client }) };
  const verifier = new TokenVerifier({ keyring: keyring as never, clock, snapshot: snapshot as never, publicUrl: () => publicUrl, trustedIssuers: [], audience });
  const nowSeconds = () => Math.floor(clock.now() / 1000);
  const sign = (claims: Partial<JWTPayload> = {}, kid = 'k1', key: CryptoKey = privateKey) =>
    new SignJWT({ client_id: 'app', scope: 'termDeposit:retrieve', iss: issuer, aud: audience, iat: nowSeconds(), exp: nowSeconds() + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid })
      .sign(key);
  return { clock, verifier, sign, nowSeconds, keys, keyReads: () => keyReads };
}

/** The refusal's message, whether `verify` rejects or `verifyCached` throws. */
async function refusal(run: () => unknown): Promise<string> {
  try {
    await run();
  } catch (error) {
    assert.ok(error instanceof TokenRejected, `a TokenRejected, got ${String(error)}`);
    return error.message;
  }
  assert.fail('the token was accepted');
}

function flipSignature(token: string): string {
  const [header, payload, signature = ''] = token.split('.');
  const last = signature.at(-2) === 'A' ? 'B' : 'A';
  return `${header}.${payload}.${signature.slice(0, -2)}${last}${signature.slice(-1)}`;
}

describe('refused tokens kept in memory', () => {
  test('a forged signature: the same token sent again is refused with the same message, from memory (no key read, no promise)', async () => {
    const f = await fixture();
    const forged = flipSignature(await f.sign());
    assert.equal(f.verifier.verifyCached(forged), undefined, 'never seen: verify decides');
    assert.equal(await refusal(() => f.verifier.verify(forged)), 'The token signature is invalid');
    const reads = f.keyReads();
    assert.equal(await refusal(() => f.verifier.verifyCached(forged)), 'The token signature is invalid');
    assert.equal(await refusal(() => f.verifier.verify(forged)), 'The token signature is invalid');
    assert.equal(f.keyReads(), reads, 'the signature was not checked again');
  });

  test('an expired token and one for another audience are refused again from memory, with their own messages', async () => {
    const f = await fixture();
    const expired = await f.sign({ iat: f.nowSeconds() - 400, exp: f.nowSeconds() - 31 });
    const otherAudience = await f.sign({ aud: 'another-api' });
    assert.match(await refusal(() => f.verifier.verify(expired)), /expired/);
    assert.equal(await refusal(() => f.verifier.verify(otherAudience)), "The token's aud claim is not acceptable");
    const reads = f.keyReads();
    assert.match(await refusal(() => f.verifier.verifyCached(expired)), /expired/);
    assert.equal(await refusal(() => f.verifier.verifyCached(otherAudience)), "The token's aud claim is not acceptable");
    assert.equal(f.keyReads(), reads);
  });

  test('a token verified before and then expired is refused, and stays refused from memory', async () => {
    const f = await fixture();
    const token = await f.sign({ exp: f.nowSeconds() + 60 });
    assert.equal((await f.verifier.verify(token)).clientId, 'app');
    f.clock.advance(91_000);
    assert.match(await refusal(() => f.verifier.verifyCached(token)), /expired/);
    const reads = f.keyReads();
    assert.match(await refusal(() => f.verifier.verify(token)), /expired/);
    assert.equal(f.keyReads(), reads);
  });

  test('not yet valid (nbf in the future) is decided again each time: the same token passes once its time has come', async () => {
    const f = await fixture();
    const early = await f.sign({ nbf: f.nowSeconds() + 40 });
    assert.equal(await refusal(() => f.verifier.verify(early)), "The token's nbf claim is not acceptable");
    assert.equal(f.verifier.verifyCached(early), undefined, 'not kept: verify decides again');
    f.clock.advance(20_000);
    assert.equal((await f.verifier.verify(early)).clientId, 'app');
  });

  test('an unknown key is decided again each time: once the realm publishes the key, the same token passes at once', async () => {
    const f = await fixture();
    const next = await generateKeyPair('RS256', { extractable: true });
    const token = await f.sign({}, 'k2', next.privateKey);
    assert.equal(await refusal(() => f.verifier.verify(token)), 'The token is signed by an unknown key');
    assert.equal(f.verifier.verifyCached(token), undefined);
    f.keys.push({ kid: 'k2', alg: 'RS256', publicJwk: await exportJWK(next.publicKey), publicKey: next.publicKey, retiredAt: null });
    assert.equal((await f.verifier.verify(token)).clientId, 'app');
  });

  test('a refused token leaves a valid token of the same client alone, and a valid token is never refused from memory', async () => {
    const f = await fixture();
    const valid = await f.sign();
    await refusal(() => f.verifier.verify(flipSignature(valid)));
    assert.equal((await f.verifier.verify(valid)).clientId, 'app');
    assert.equal(f.verifier.verifyCached(valid)?.clientId, 'app');
  });
});
