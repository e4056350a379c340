/**
 * src/auth/jws-verify.ts checks coregate's own realms' tokens with node:crypto instead of jose's
 * jwtVerify (issue 28: a forged token cost a fifth as much). Its answers must be jose's: for every
 * token here — valid, forged, malformed, each claim wrong in each way — both accept with the same
 * claims, or both refuse with the same error code and claim, for every algorithm a realm signs with.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { KeyObject } from 'node:crypto';
import { signCompactJws } from '../../src/auth/jws-sign.js';
import { JwtCheckFailed, verifyCompactJwt, verifyKnownHeaderJwt } from '../../src/auth/jws-verify.js';
import { signingAlgorithms } from '../../src/auth/signing-algorithms.js';

const issuer = 'https://coregate.test/realms/bank';
const audience = 'coregate-api';
const tolerance = 30;
const now = 1_800_000_000;

type Outcome = { accepted: Record<string, unknown> } | { refused: { code: string; claim: string | undefined } };

async function joseOutcome(token: string, alg: string, key: CryptoKey): Promise<Outcome> {
  try {
    const { payload } = await jwtVerify(token, key, { issuer, audience, algorithms: [alg], clockTolerance: tolerance, currentDate: new Date(now * 1000), requiredClaims: ['exp'] });
    return { accepted: { ...payload } };
  } catch (error) {
    const { code, claim } = error as { code: string; claim?: string };
    return { refused: { code, claim } };
  }
}

async function ownOutcome(token: string, alg: (typeof signingAlgorithms)[number], key: CryptoKey): Promise<Outcome> {
  try {
    return { accepted: { ...(await verifyCompactJwt(token, alg, key, { issuer, audience, clockToleranceSeconds: tolerance, nowSeconds: now })) } };
  } catch (error) {
    assert.ok(error instanceof JwtCheckFailed, `a JwtCheckFailed, got ${String(error)}`);
    return { refused: { code: error.code, claim: error.claim } };
  }
}

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('jws-verify.ts answers as jose jwtVerify does', () => {
  for (const alg of signingAlgorithms) {
    test(`${alg}: valid, forged, malformed and every claim case — same acceptance, same code and claim`, async () => {
      const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
      const other = await generateKeyPair(alg, { extractable: true });
      const claims = { iss: issuer, aud: audience, client_id: 'app', iat: now - 10, exp: now + 300 };
      const sign = (payload: Record<string, unknown>, header: Record<string, unknown> = {}, key: CryptoKey = privateKey) =>
        new SignJWT(payload as JWTPayload).setProtectedHeader({ alg, typ: 'JWT', kid: 'k1', ...header }).sign(key);
      const valid = await sign(claims);
      const [header, payload, signature = ''] = valid.split('.');
      const flipped = `${header}.${payload}.${signature.slice(0, 5)}${signature[5] === 'A' ? 'B' : 'A'}${signature.slice(6)}`;
      const without = (name: string) => Object.fromEntries(Object.entries(claims).filter(([key]) => key !== name));
      const tokens: Record<string, string> = {
        valid,
        'aud as an array holding ours': await sign({ ...claims, aud: ['other', audience] }),
        'flipped signature bit': flipped,
        'signed by another key': await sign(claims, {}, other.privateKey),
        'payload swapped under the signature': `${header}.${b64({ ...claims, client_id: 'admin' })}.${signature}`,
        'empty signature': `${header}.${payload}.`,
        'truncated signature': `${header}.${payload}.${signature.slice(0, 20)}`,
        'four segments': `${valid}.AAAA`,
        // Buffer's decoder would drop a lone last character; jose refuses the length.
        'one character added to the signature': `${valid}A`,
        'one character added to the payload': `${header}.${payload}A.${signature}`,
        'a character outside base64url in the signature': `${header}.${payload}.${signature.slice(0, -1)}ł`,
        'a character outside base64url in the payload': `${header}.${(payload ?? "").slice(0, -1)}ł.${signature}`,
        'header alg differs from the key': `${b64({ alg: alg === 'RS256' ? 'ES256' : 'RS256', typ: 'JWT' })}.${payload}.${signature}`,
        'header without alg': `${b64({ typ: 'JWT' })}.${payload}.${signature}`,
        'header not JSON': `${b64('not json')}.${payload}.${signature}`,
        // jose will not sign an unknown extension: signed here with node:crypto.
        'header crit, unknown extension': await signCompactJws(alg, KeyObject.from(privateKey as never), { alg, crit: ['x-ext'], 'x-ext': 1 }, claims),
        'header crit, not an array': await signCompactJws(alg, KeyObject.from(privateKey as never), { alg, crit: 'x-ext', 'x-ext': 1 }, claims),
        'header crit, empty': await signCompactJws(alg, KeyObject.from(privateKey as never), { alg, crit: [] }, claims),
        'payload an array': await signCompactJws(alg, KeyObject.from(privateKey as never), { alg, typ: 'JWT' }, [1, 2]),
        'payload invalid UTF-8': await (async () => {
          const input = `${header}.${Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url')}`;
          return `${input}.${signature}`; // the signature cannot match: both refuse it at the signature
        })(),
        'no iss': await sign(without('iss')),
        'no aud': await sign(without('aud')),
        'no exp': await sign(without('exp')),
        'no iss, no aud, no exp': await sign({ client_id: 'app' }),
        'another issuer': await sign({ ...claims, iss: 'https://elsewhere.test' }),
        'another audience': await sign({ ...claims, aud: 'partner-api' }),
        'aud array without ours': await sign({ ...claims, aud: ['a', 'b'] }),
        'aud a number': await sign({ ...claims, aud: 7 }),
        'iat a string': await sign({ ...claims, iat: 'yesterday' }),
        'nbf a string': await sign({ ...claims, nbf: 'soon' }),
        'exp a string': await sign({ ...claims, exp: 'later' }),
        'nbf 31 s ahead': await sign({ ...claims, nbf: now + 31 }),
        'nbf 30 s ahead': await sign({ ...claims, nbf: now + 30 }),
        'exp 30 s ago': await sign({ ...claims, exp: now - 30 }),
        'exp 29 s ago': await sign({ ...claims, exp: now - 29 }),
        'exp now': await sign({ ...claims, exp: now }),
        'iat far in the future (checked by bearer-auth, not here)': await sign({ ...claims, iat: now + 3600 }),
      };
      for (const [name, token] of Object.entries(tokens)) {
        assert.deepEqual(await ownOutcome(token, alg, publicKey), await joseOutcome(token, alg, publicKey), `${alg}: ${name}`);
      }
      assert.ok('accepted' in (await ownOutcome(valid, alg, publicKey)), 'the valid token is accepted');
    });
  }
});

/**
 * verifyKnownHeaderJwt (issue 42): the next DPoP proofs and client assertions under a protected
 * header jose already accepted are verified with node:crypto and the key jose used. For every
 * token of that header here — valid, forged, malformed, each claim wrong in each way — it accepts
 * with the same claims as jose, refuses with jose's error (class, code, claim, reason, message),
 * or leaves the token to jose (undefined). Tokens of another header never reach it (the callers
 * key the known headers by their exact text).
 */
describe('verifyKnownHeaderJwt answers as jose jwtVerify does for a header jose accepted', () => {
  type KnownOutcome = { accepted: Record<string, unknown> } | { refused: { name: string; code: string; claim: string | undefined; reason: string | undefined; message: string } } | { leftToJose: true };
  const refusal = (error: unknown) => {
    const { name, code, claim, reason, message } = error as { name: string; code: string; claim?: string; reason?: string; message: string };
    return { refused: { name, code, claim, reason, message } };
  };
  const uses = {
    'DPoP proof': { typ: 'dpop+jwt', options: {}, required: [] as string[] },
    'client assertion': { typ: undefined, options: { issuer: 'app', subject: 'app' }, required: ['exp', 'jti', 'iss', 'sub', 'aud'] as string[] },
  } as const;
  for (const alg of ['ES256', 'PS256', 'EdDSA', 'RS256'] as const) {
    for (const [use, { typ, options, required }] of Object.entries(uses)) {
      if (use === 'DPoP proof' && alg === 'RS256') continue; // not a DPoP algorithm here
      test(`${alg}, ${use}: valid, forged, malformed and every claim case — same acceptance, same error`, async () => {
        const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
        const other = await generateKeyPair(alg, { extractable: true });
        const protectedHeader = { alg, ...(typ === undefined ? { kid: 'k1' } : { typ }) };
        const claims = { iss: 'app', sub: 'app', aud: 'https://coregate.test/realms/bank', jti: 'j-1', htm: 'GET', iat: now - 10, exp: now + 60 };
        const sign = (payload: unknown, key: CryptoKey = privateKey) =>
          typeof payload === 'object' && payload !== null && !Array.isArray(payload)
            ? new SignJWT(payload as JWTPayload).setProtectedHeader(protectedHeader).sign(key)
            : signCompactJws(alg, KeyObject.from(key as never), protectedHeader, payload as never);
        const valid = await sign(claims);
        const [header, payload, signature = ''] = valid.split('.');
        const flipped = `${header}.${payload}.${signature.slice(0, 5)}${signature[5] === 'A' ? 'B' : 'A'}${signature.slice(6)}`;
        const without = (name: string) => Object.fromEntries(Object.entries(claims).filter(([key]) => key !== name));
        const tokens: Record<string, string> = {
          valid,
          'flipped signature bit': flipped,
          'signed by another key': await sign(claims, other.privateKey),
          'payload swapped under the signature': `${header}.${b64({ ...claims, jti: 'j-2' })}.${signature}`,
          'empty signature': `${header}.${payload}.`,
          'truncated signature': `${header}.${payload}.${signature.slice(0, 20)}`,
          'four segments': `${valid}.AAAA`,
          'two segments': `${header}.${payload}`,
          'one character added to the signature': `${valid}A`,
          'one character added to the payload': `${header}.${payload}A.${signature}`,
          'a character outside base64url in the signature': `${header}.${payload}.${signature.slice(0, -1)}ł`,
          'a character outside base64url in the payload': `${header}.${(payload ?? '').slice(0, -1)}ł.${signature}`,
          'payload not JSON': await sign('not json'),
          'payload an array': await sign([1, 2]),
          'payload a number': await sign(7),
          'payload invalid UTF-8, signed': await (async () => {
            const input = `${header}.${Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d]).toString('base64url')}`;
            return `${input}.${(await signCompactJws(alg, KeyObject.from(privateKey as never), protectedHeader, {})).split('.')[2]}`;
          })(),
          'no iss': await sign(without('iss')),
          'no sub': await sign(without('sub')),
          'no aud': await sign(without('aud')),
          'no jti': await sign(without('jti')),
          'no exp': await sign(without('exp')),
          'no iat': await sign(without('iat')),
          'nothing': await sign({}),
          'another iss': await sign({ ...claims, iss: 'other' }),
          'another sub': await sign({ ...claims, sub: 'other' }),
          'iss a number': await sign({ ...claims, iss: 7 }),
          'iat a string': await sign({ ...claims, iat: 'yesterday' }),
          'nbf a string': await sign({ ...claims, nbf: 'soon' }),
          'exp a string': await sign({ ...claims, exp: 'later' }),
          'nbf 11 s ahead': await sign({ ...claims, nbf: now + 11 }),
          'nbf 10 s ahead': await sign({ ...claims, nbf: now + 10 }),
          'exp 10 s ago': await sign({ ...claims, exp: now - 10 }),
          'exp 9 s ago': await sign({ ...claims, exp: now - 9 }),
          'exp now': await sign({ ...claims, exp: now }),
          'iat an hour ahead (the caller\'s rule, not jose\'s)': await sign({ ...claims, iat: now + 3600 }),
        };
        const known = { alg, key: KeyObject.from(publicKey as never) };
        const claimsOptions = { ...options, requiredClaims: required, nowSeconds: now, clockToleranceSeconds: 10 };
        for (const [name, token] of Object.entries(tokens)) {
          let own: KnownOutcome;
          try {
            const claimsSet = verifyKnownHeaderJwt(token, known, claimsOptions);
            own = claimsSet === undefined ? { leftToJose: true } : { accepted: { ...claimsSet } };
          } catch (error) {
            own = refusal(error);
          }
          let jose: KnownOutcome;
          try {
            const verified = await jwtVerify(token, publicKey, { ...options, ...(typ === undefined ? {} : { typ }), algorithms: [alg], currentDate: new Date(now * 1000), clockTolerance: 10, requiredClaims: required });
            jose = { accepted: { ...verified.payload } };
          } catch (error) {
            jose = refusal(error);
          }
          if ('leftToJose' in own) continue; // the caller asks jose: its answer is jose's by construction
          assert.deepEqual(own, jose, `${alg}, ${use}: ${name}`);
        }
        const validOutcome = verifyKnownHeaderJwt(valid, known, claimsOptions);
        assert.deepEqual(validOutcome, claims, 'the valid token is accepted by the fast path itself');
      });
    }
  }
});
