/**
 * The failed-authentication limit's admission (src/auth/failure-limit.ts): a pair's attempts run
 * at once while its failures and its running attempts stay below the limit, so a client that
 * authenticates well is not bound to one verification at a time (a client assertion is verified
 * asynchronously), and a burst of guesses is still checked exactly up to the limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AuthFailureLimiter } from '../../src/auth/failure-limit.js';
import { OAuthError } from '../../src/auth/oauth-error.js';
import { MemoryLimitStore } from '../../src/limits/memory-limit-store.js';

const attempt = { realm: 'fapi', clientId: 'fapi-app', sourceAddress: '192.0.2.7' };
const limiterOf = (failuresMax: number) => new AuthFailureLimiter(new MemoryLimitStore({ clock: () => 0 }), { failuresMax, windowSeconds: 60 });

/** An authentication held until the test releases it; counts how many run at once. */
function heldAuthentications() {
  let running = 0;
  let most = 0;
  const releases: Array<(ok: boolean) => void> = [];
  const authenticate = () =>
    new Promise<string>((resolve, reject) => {
      running += 1;
      most = Math.max(most, running);
      releases.push((ok) => {
        running -= 1;
        if (ok) resolve('client');
        else reject(new OAuthError(401, 'invalid_client', 'Invalid client or Invalid client credentials'));
      });
    });
  return { authenticate, releases, most: () => most, started: () => releases.length };
}

const turns = async (count = 20) => {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

test('a client that authenticates well runs up to the limit\'s number of attempts at once, then waits for one to end', async () => {
  const limiter = limiterOf(10);
  const held = heldAuthentications();
  const results = Array.from({ length: 12 }, () => limiter.guard(attempt, held.authenticate));
  await turns();
  assert.equal(held.started(), 10, 'ten verifications at once');
  held.releases[0]?.(true);
  await turns();
  assert.equal(held.started(), 11, 'one ended, one more starts');
  for (let index = 1; index < 12; index += 1) {
    while (held.started() <= index) await turns(1);
    held.releases[index]?.(true);
  }
  assert.deepEqual(await Promise.all(results), Array(12).fill('client'));
  assert.equal(held.most(), 10);
});

test('a burst of concurrent failing attempts is checked exactly up to the limit; the rest are refused unchecked (429)', async () => {
  const limiter = limiterOf(3);
  const held = heldAuthentications();
  const results = Array.from({ length: 7 }, () => limiter.guard(attempt, held.authenticate).then(() => 200, (error: OAuthError) => error.status));
  await turns();
  assert.equal(held.started(), 3);
  for (const release of held.releases) release(false);
  const statuses = await Promise.all(results);
  assert.equal(held.started(), 3, 'no fourth guess was checked');
  assert.deepEqual(statuses.sort(), [401, 401, 401, 429, 429, 429, 429]);
});

test('with a count shared by several instances (Redis), an instance checks one attempt of a pair at a time', async () => {
  const limiter = new AuthFailureLimiter(new MemoryLimitStore({ clock: () => 0 }), { failuresMax: 10, windowSeconds: 60, shared: true });
  const held = heldAuthentications();
  const results = Array.from({ length: 3 }, () => limiter.guard(attempt, held.authenticate));
  await turns();
  assert.equal(held.started(), 1, 'the other instances\' running attempts are not seen here');
  for (let index = 0; index < 3; index += 1) {
    while (held.started() <= index) await turns(1);
    held.releases[index]?.(true);
  }
  assert.deepEqual(await Promise.all(results), ['client', 'client', 'client']);
});
