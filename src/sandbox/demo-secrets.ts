/**
 * Clients whose secret is a demo one: published sample data, so that anyone who has read it can
 * obtain their tokens. Expected in a sandbox; outside sandbox mode a start warns, naming the
 * clients (never a secret), `coregate check` lists them, and the Postman collection carries no
 * secret (docs/deployment.md, "The database and the master key"; docs/collections.md).
 *
 * The store keeps only a secret's keyed hash, so a demo secret is recognised the way the token
 * endpoint recognises a secret: a client is named when its stored hash verifies one of the demo
 * secrets, which are the data file's secrets containing `change-me` (as every client secret of
 * the bundled demo/sandbox.json does), from the data file being loaded and from the bundled demo
 * data. A client whose secret was rotated (`coregate clients rotate-secret`) is no longer named.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyClientSecret } from '../auth/client-secret.js';
import type { Logger } from '../log.js';
import { listClients } from '../store/clients.js';
import { listRealms } from '../store/realms.js';
import type { Queryable } from '../store/queryable.js';

/** What marks a data file's secret as sample data. */
export const demoSecretMarker = 'change-me';

/** A client with a demo secret, as `realm/clientId`. */
export interface DemoSecretClient {
  realm: string;
  clientId: string;
}

/** The client secrets of a data file (parsed or not) that contain the marker. */
export function demoSecretsOf(data: unknown): string[] {
  const realms = (data as { realms?: Array<{ clients?: Array<{ secret?: unknown }> }> } | undefined)?.realms;
  const secrets = new Set<string>();
  for (const realm of Array.isArray(realms) ? realms : []) {
    for (const client of Array.isArray(realm?.clients) ? realm.clients : []) {
      if (typeof client?.secret === 'string' && client.secret.toLowerCase().includes(demoSecretMarker)) secrets.add(client.secret);
    }
  }
  return [...secrets];
}

/** demo/sandbox.json, whether this module runs from src (tsx) or from dist/src (the build); undefined when it is not installed beside it. */
function bundledDemoData(): unknown {
  const here = dirname(fileURLToPath(import.meta.url));
  const file = [join(here, '..', '..', 'demo', 'sandbox.json'), join(here, '..', '..', '..', 'demo', 'sandbox.json')].find((candidate) => existsSync(candidate));
  if (file === undefined) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** The bundled demo data's secrets, and the loaded data file's (`data`) that carry the marker. */
export function knownDemoSecrets(data?: unknown): string[] {
  return [...new Set([...demoSecretsOf(bundledDemoData()), ...demoSecretsOf(data)])];
}

/** Every client of the store whose stored secret hash verifies one of `secrets`, in realm and client order. */
export async function clientsWithDemoSecrets(db: Queryable, hashKey: Buffer, secrets: readonly string[]): Promise<DemoSecretClient[]> {
  if (secrets.length === 0) return [];
  const found: DemoSecretClient[] = [];
  for (const realm of await listRealms(db)) {
    for (const client of await listClients(db, realm.name)) {
      if (client.secretHash === '') continue;
      if (secrets.some((secret) => verifyClientSecret(hashKey, secret, client.secretHash))) found.push({ realm: realm.name, clientId: client.clientId });
    }
  }
  return found;
}

/** The start's warning outside sandbox mode (src/main.ts): one line naming the clients, never a secret. */
export async function warnOfDemoSecrets(db: Queryable, hashKey: Buffer, data: unknown, logger: Logger): Promise<DemoSecretClient[]> {
  const clients = await clientsWithDemoSecrets(db, hashKey, knownDemoSecrets(data));
  if (clients.length === 0) return clients;
  const names = clients.map((client) => `${client.realm}/${client.clientId}`);
  logger.warn(
    { clients: names },
    `${names.length} client${names.length === 1 ? ' has' : 's have'} a demo secret (sample data containing ${demoSecretMarker}) outside sandbox mode: ${names.join(', ')}. ` +
      'Anyone who has read the demo data can obtain their tokens: rotate them (coregate clients rotate-secret --realm REALM --client-id CLIENT) or give the data file secrets of your own',
  );
  return clients;
}
