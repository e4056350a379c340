/**
 * Bearer validation's checks of a token's client (docs/auth.md, "Client revocation"): a token of a
 * coregate realm is refused when its client is unknown, disabled, or had its tokens revoked after
 * the token was issued (`iat` before the client's not-before), decided from the auth snapshot. The
 * request path's common case — a token verified before, its realm and client fresh in the
 * snapshot — is answered by `verifyCached` without a promise; a client the snapshot holds
 * disabled or unknown is read again before the refusal, so that a client just enabled works at
 * once. The verifier is built alone, with a snapshot that counts its reads.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { TokenRejected, TokenVerifier } from '../../src/api/bearer-auth.js';
import { FakeClock } from '../helpers/fake-clock.js';

const publicUrl = 'https://coregate.test';
const issuer = `${publicUrl}/realms/bank`;
const audience = 'coregate-api';

interface ClientState {
  enabled: boolean;
  tokensNotBefore: number;
}

async function fixture() {
  const clock = new FakeClock();
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const keys = [{ kid: 'k1', alg: 'RS256', publicJwk: await exportJWK(publicKey), publicKey, retiredAt: null }];
  const realm = { name: 'bank', key_generation: 1, not_before: 0 };
  const keyring = { publishedKeys: async () => keys };
  /** The client as the store holds it (undefined: none), and as the snapshot holds it (`peeked`: fresh there, or stale). */
  const state = {
    stored: { realm: 'bank', clientId: 'app', enabled: true, tokensNotBefore: 0 } as (ClientState & { realm: string; clientId: string }) | undefined,
    snapshot: undefined as (ClientState & { realm: string; clientId: string }) | undefined,
    peeked: true,
    reads: [] as boolean[],
  };
  state.snapshot = state.stored;
  const snapshot = {
    realm: async () => realm,
    peekRealm: () => ({ value: realm }),
    client: async (_realm: string, _clientId: string, fresh = false) => {
      state.reads.push(fresh);
      if (fresh || !state.peeked) {
        state.snapshot = state.stored;
        state.peeked = true;
      }
      return state.snapshot;
    },
    // The store read again before a refusal (AuthSnapshot.clientBeforeRefusal).
    clientBeforeRefusal: async () => {
      state.reads.push(true);
      state.snapshot = state.stored;
      state.peeked = true;
      return state.snapshot;
    },
    peekClient: () => (state.peeked ? { value: state.snapshot } : undefined),
  };
  const verifier = new TokenVerifier({ keyring: keyring as never, clock, snapshot: snapshot as never, publicUrl: () => publicUrl, trustedIssuers: [], audience });
  const nowSeconds = () => Math.floor(clock.now() / 1000);
  const sign = (claims: Partial<JWTPayload> = {}) =>
    new SignJWT({ client_id: 'app', azp: 'app', scope: 'termDeposit:retrieve', iss: issuer, aud: audience, iat: nowSeconds(), exp: nowSeconds() + 300, ...claims })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'k1' })
      .sign(privateKey);
  return { clock, verifier, sign, nowSeconds, state };
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

describe('Bearer validation checks the token\'s client (docs/auth.md, "Client revocation")', () => {
  test('a token verified before, its realm and client fresh in the snapshot: verifyCached answers its principal without a promise, with the realm\'s name', async () => {
    const f = await fixture();
    const token = await f.sign();
    const verified = await f.verifier.verify(token);
    assert.equal(verified.realm, 'bank');
    const reads = f.state.reads.length;
    const cached = f.verifier.verifyCached(token);
    assert.ok(cached !== undefined && !(cached instanceof Promise), 'answered synchronously');
    assert.equal(cached.clientId, 'app');
    assert.equal(cached.realm, 'bank');
    assert.equal(f.state.reads.length, reads, 'no read of the client');
  });

  test('issued before the client\'s not-before: refused by verify, and by verifyCached at once from the snapshot (no read)', async () => {
    const f = await fixture();
    const token = await f.sign();
    await f.verifier.verify(token);
    f.state.stored = { ...f.state.stored!, tokensNotBefore: f.nowSeconds() + 1 };
    f.state.peeked = false;
    assert.equal(f.verifier.verifyCached(token), undefined, 'the client is not fresh in the snapshot: verify decides');
    assert.match(await refusal(() => f.verifier.verify(token)), /client's not-before/);
    const reads = f.state.reads.length;
    assert.match(await refusal(() => f.verifier.verifyCached(token)), /client's not-before/);
    assert.equal(f.state.reads.length, reads, 'refused from the snapshot');
    // A token issued at the not-before (the token endpoint's max(now, not-before)) passes.
    f.clock.advance(1_000);
    assert.equal((await f.verifier.verify(await f.sign())).clientId, 'app');
  });

  test('a token never verified before, of a revoked client, is refused by verify; sent again, by verifyCached at once (its verification kept, its revocation decided on every use)', async () => {
    const f = await fixture();
    const token = await f.sign();
    f.state.stored = { ...f.state.stored!, tokensNotBefore: f.nowSeconds() + 1 };
    f.state.snapshot = f.state.stored;
    assert.match(await refusal(() => f.verifier.verify(token)), /client's not-before/);
    assert.match(await refusal(() => f.verifier.verifyCached(token)), /client's not-before/);
  });

  test('a client the snapshot holds disabled is read again before the refusal: enabled in the store, its token passes at once', async () => {
    const f = await fixture();
    const token = await f.sign();
    f.state.snapshot = { ...f.state.stored!, enabled: false };
    assert.equal(f.verifier.verifyCached(token), undefined);
    assert.equal((await f.verifier.verify(token)).clientId, 'app');
    assert.ok(f.state.reads.includes(true), 'the store was read afresh');
    assert.equal(f.verifier.verifyCached(token)?.clientId, 'app', 'and the common case is synchronous again');
  });

  test('a client disabled in the store, or no longer there, refuses the token (not kept: enabling it decides again)', async () => {
    const f = await fixture();
    const token = await f.sign();
    await f.verifier.verify(token);
    f.state.stored = { ...f.state.stored!, enabled: false };
    f.state.peeked = false;
    assert.equal(await refusal(() => f.verifier.verify(token)), 'The token\'s client is disabled');
    f.state.stored = undefined;
    f.state.peeked = false;
    assert.equal(await refusal(() => f.verifier.verify(token)), 'The token\'s client does not exist');
    f.state.stored = { realm: 'bank', clientId: 'app', enabled: true, tokensNotBefore: 0 };
    f.state.peeked = false;
    assert.equal((await f.verifier.verify(token)).clientId, 'app');
  });
});
