/**
 * Tests that cut coregate's database connections under load (issue 24): the clients, the cuts and
 * a data file whose source account no run can drain.
 */
import { randomUUID } from 'node:crypto';
import { depositBody } from './bodies.js';
import { readDemoData, writeTempDataFile, type SandboxData } from './data-files.js';
import { initiatePath } from './http.js';
import type { CoregateProcess } from './processes.js';
import { demo, postForm } from './server.js';
import { adminQuery, closeProbeStores } from './stores.js';
import { sleep, waitFor } from './wait.js';

/** A client waits this long after a 503 before its next request (the answer's Retry-After, shortened to keep the load on). */
export const pauseAfterUnavailableMs = 100;

/** The demo data with a source account that no run can drain (the demo's covers 250 deposits). */
export const dataFile = (() => {
  const data = readDemoData<SandboxData>();
  const source = data.accounts.find((account) => account.accountNumber === '1000000001');
  if (source) source.balance = 100_000_000;
  return writeTempDataFile(data, 'coregate-connection-loss-');
})();

export type Outcome = { correlationId: string; status: number | 'network-error'; body: string };

export async function terminateSessions(databaseName: string): Promise<number> {
  // The tests' own probe stores are closed, not cut: a probe right after the cut must not be handed a dead session.
  await closeProbeStores();
  const [row] = await adminQuery<{ cut: number }>('select count(pg_terminate_backend(pid))::int as cut from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [databaseName]);
  return row?.cut ?? 0;
}

export const readyStatus = async (serve: CoregateProcess): Promise<number> => (await fetch(`${serve.url}/health/ready`)).status;

export async function tokenOf(serve: CoregateProcess): Promise<string> {
  return waitFor('a token', async () => {
    const answer = await postForm(`${serve.url}/realms/sandbox/protocol/openid-connect/token`, {
      grant_type: 'client_credentials',
      client_id: demo.treasury.clientId,
      client_secret: demo.treasury.secret,
    }).catch(() => undefined);
    return answer?.status === 200 ? (answer.body.access_token as string) : undefined;
  }, 30_000);
}

export async function initiate(serve: CoregateProcess, token: string, correlationId: string): Promise<Omit<Outcome, 'correlationId'>> {
  try {
    const response = await fetch(`${serve.url}${initiatePath}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-correlation-id': correlationId },
      body: JSON.stringify(depositBody(1000, '1000000001')),
    });
    return { status: response.status, body: await response.text() };
  } catch {
    return { status: 'network-error', body: '' };
  }
}

/**
 * Clients that each send one deposit after another until `stop()`; a client pauses after an answer
 * other than 200, as a client honouring Retry-After would. `outcomes` grows as they answer.
 */
export function depositClients(serve: CoregateProcess, token: string, count: number): { outcomes: Outcome[]; stop(): Promise<void> } {
  const outcomes: Outcome[] = [];
  let stopping = false;
  const client = async () => {
    while (!stopping) {
      const correlationId = randomUUID();
      const outcome = { correlationId, ...(await initiate(serve, token, correlationId)) };
      outcomes.push(outcome);
      if (outcome.status !== 200) await sleep(pauseAfterUnavailableMs);
    }
  };
  const running = Array.from({ length: count }, client);
  return {
    outcomes,
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
  };
}

/** Waits until `outcomes` has grown by `count` answers: the service is under load between cuts. */
export async function answersServed(outcomes: Outcome[], count: number): Promise<void> {
  const before = outcomes.length;
  await waitFor('requests served between cuts', async () => (outcomes.length >= before + count ? true : undefined), 30_000);
}

/** Answers counted by status, for messages. */
export function countByStatus(outcomes: Outcome[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const outcome of outcomes) counts[String(outcome.status)] = (counts[String(outcome.status)] ?? 0) + 1;
  return counts;
}
