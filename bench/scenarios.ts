/** The measured requests: every scenario of the performance table, built against one server. */
import { randomUUID } from 'node:crypto';
import { benchCustomers, client, depositBody, loanBody, loanPath, narrowClient, realms } from './data.js';
import type { Scenario } from './load.js';

const customers = benchCustomers();
const tokenPath = (realm: string) => `/realms/${realm}/protocol/openid-connect/token`;
const tokenForm = new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.secret }).toString();
/** Copied for every request: autocannon writes the body's Content-Length into the headers it is given. */
const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' } as const;
/** Unique per run and request: the server's duplicate protection must never answer 409. */
const runId = randomUUID().slice(0, 8);

export async function obtainToken(url: string, realm: string = realms.rs256, who: { clientId: string; secret: string } = client): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: who.clientId, client_secret: who.secret }).toString();
  const response = await fetch(`${url}${tokenPath(realm)}`, { method: 'POST', headers: { ...formHeaders }, body: form });
  if (!response.ok) throw new Error(`token request to ${realm} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** One deposit to retrieve in the retrieve scenario. */
export async function createDeposit(url: string, token: string): Promise<string> {
  const response = await fetch(`${url}/v1/term-deposits/initiate`, {
    method: 'POST',
    headers: { ...jsonHeaders(token), 'x-correlation-id': `bench-${runId}-seed-${randomUUID()}` },
    body: depositBody(customers[0]!),
  });
  const body = (await response.json()) as { termDepositAccount?: string };
  if (!response.ok || !body.termDepositAccount) throw new Error(`the seed deposit answered ${response.status}: ${JSON.stringify(body)}`);
  return body.termDepositAccount;
}

function jsonHeaders(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
}

/** x-correlation-id allows A-Z a-z 0-9 . _ : - only. */
function correlation(name: string, i: number): Record<string, string> {
  return { 'x-correlation-id': `bench-${runId}-${name.replace(/[^A-Za-z0-9]+/g, '-')}-${i}` };
}

export function tokenScenario(name: string, realm: string): Scenario {
  return { name, expect: [200], request: () => ({ method: 'POST', path: tokenPath(realm), headers: { ...formHeaders }, body: tokenForm }) };
}

/** Deposits spread over the 200 customers' accounts, or all debiting one (`hot`). */
export function depositScenario(name: string, token: string, options: { hot?: boolean } = {}): Scenario {
  return {
    name,
    expect: [200],
    request: (i) => {
      const customer = customers[i % customers.length]!;
      const source = options.hot ? customers[0]!.sourceAccount : customer.sourceAccount;
      const owner = options.hot ? customers[0]! : customer;
      return { method: 'POST', path: '/v1/term-deposits/initiate', headers: { ...jsonHeaders(token), ...correlation(name, i) }, body: depositBody(owner, source) };
    },
  };
}

export function loanScenario(name: string, token: string): Scenario {
  return {
    name,
    expect: [200],
    request: (i) => {
      const customer = customers[i % customers.length]!;
      return { method: 'POST', path: loanPath(customer), headers: { ...jsonHeaders(token), ...correlation(name, i) }, body: loanBody(customer) };
    },
  };
}

/** Both spellings of the retrieve path, in turn. */
export function retrieveScenario(name: string, token: string, depositId: string): Scenario {
  return {
    name,
    expect: [200],
    request: (i) => ({ method: 'GET', path: `/v1/${i % 2 === 0 ? 'term-deposits' : 'term-deposit'}/${depositId}/retrieve`, headers: { authorization: `Bearer ${token}` } }),
  };
}

export function malformedTokenScenario(name: string, depositId: string): Scenario {
  return { name, expect: [401], request: () => ({ method: 'GET', path: `/v1/term-deposits/${depositId}/retrieve`, headers: { authorization: 'Bearer not-a.jwt' } }) };
}

/**
 * A token of the realm's shape, issuer and key whose signature does not match: the same token
 * every request (a client replaying what it has), or a different one each time (`unique`: what
 * an attacker forging tokens sends), each of which needs its signature checked.
 */
export function badSignatureScenario(name: string, token: string, depositId: string, options: { unique?: boolean } = {}): Scenario {
  const [header, payload, signature = ''] = token.split('.');
  const forged = (i: number) => {
    const tail = options.unique ? i.toString(36).padStart(8, 'A').slice(-8) : 'AAAAAAAA';
    return `${header}.${payload}.${signature.slice(0, -10)}${tail}${signature.slice(-2)}`;
  };
  return { name, expect: [401], request: (i) => ({ method: 'GET', path: `/v1/term-deposits/${depositId}/retrieve`, headers: { authorization: `Bearer ${forged(i)}` } }) };
}

/** A valid token without the retrieve scope (bench-narrow): 403, never audited (a retrieve executes nothing). */
export function forbiddenScenario(name: string, narrowToken: string, depositId: string): Scenario {
  return { name, expect: [403], request: () => ({ method: 'GET', path: `/v1/term-deposits/${depositId}/retrieve`, headers: { authorization: `Bearer ${narrowToken}` } }) };
}

/** A path no route serves, without a token. */
export function notFoundScenario(name: string): Scenario {
  return { name, expect: [404], request: (i) => ({ method: 'GET', path: `/v1/no-such-resource/${i % 100}`, headers: {} }) };
}

/**
 * A valid token and a body over 64 KiB: 413, audited (docs/api.md, "Audit": the attempt passed
 * authentication). Answered on the Content-Length; the connection is kept and the rest of the
 * body read and discarded (src/skipped-bodies.ts).
 */
export function tooLargeScenario(name: string, token: string): Scenario {
  const body = JSON.stringify({ customerReference: 'B0001', padding: 'x'.repeat(70 * 1024) });
  return { name, expect: [413], request: (i) => ({ method: 'POST', path: '/v1/term-deposits/initiate', headers: { ...jsonHeaders(token), ...correlation(name, i) }, body }) };
}

/** A valid token and a text/plain body: 415, audited. */
export function unsupportedMediaScenario(name: string, token: string): Scenario {
  return {
    name,
    expect: [415],
    request: (i) => ({ method: 'POST', path: '/v1/term-deposits/initiate', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/plain', ...correlation(name, i) }, body: 'customerReference=B0001' }),
  };
}

/** A valid token and a body that fails validation: refused with 400, and audited. */
export function invalidBodyScenario(name: string, token: string): Scenario {
  return {
    name,
    expect: [400],
    request: (i) => ({ method: 'POST', path: '/v1/term-deposits/initiate', headers: { ...jsonHeaders(token), ...correlation(name, i) }, body: '{"customerReference":"B0001"}' }),
  };
}

export function helloWorldScenario(): Scenario {
  return { name: 'hello-world', expect: [200], request: () => ({ method: 'GET', path: '/', headers: {} }) };
}
