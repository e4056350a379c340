/**
 * Clients as the token endpoint authenticates them, and realms as the token endpoint and Bearer
 * validation use them: from snapshots at most `authSnapshotMaxAgeMs` old instead of reads on every
 * request (a realm read was a database round trip per token on PostgreSQL). Only the JWKS reads its
 * realm afresh: a key must be published before any instance signs with it. Bearer validation reads
 * the clients here too: a token whose client is unknown, disabled or revoked is refused
 * (docs/auth.md, "Client revocation"). A change made by the CLI or another instance (a realm's
 * not-before, a disabled client, a new secret or new keys, a client's revoked tokens) takes effect
 * within that bound on every instance (docs/deployment.md, "What an instance keeps in memory"); one
 * made by this instance (the operator API) at once, by `forgetClient`. What grants access is
 * re-read before a refusal: a new client, secret or an enabled client work at once; only a revoked
 * grant may still be honoured for up to that bound.
 */
import { Snapshot } from '../cache/snapshot.js';
import type { Clock } from '../core/clock.js';
import { findClient, type Client } from '../store/clients.js';
import type { Realm } from '../store/realms.js';
import type { Queryable } from '../store/queryable.js';
import { findRealm } from '../store/realms.js';

export const authSnapshotMaxAgeMs = 1_000;
/** A client whose token is about to be refused is read again from the store unless such a read did so this recently. */
export const clientReadAgainMs = 100;
/** Clients remembered, unknown ids included (a flood of made-up ids evicts the oldest). */
const clientsMax = 10_000;
const realmsMax = 1_000;

export class AuthSnapshot {
  readonly #realms: Snapshot<string, Realm | undefined>;
  readonly #clients: Snapshot<string, Client | undefined>;

  constructor(db: Queryable, clock: Clock, maxAgeMs = authSnapshotMaxAgeMs) {
    this.#realms = new Snapshot((name) => findRealm(db, name), { maxAgeMs, entriesMax: realmsMax, clock });
    this.#clients = new Snapshot(
      (key) => {
        const [realm = '', clientId = ''] = key.split('\u0000');
        return findClient(db, realm, clientId);
      },
      { maxAgeMs, entriesMax: clientsMax, clock },
    );
  }

  /** `fresh`: read the store now (and refresh the snapshot), e.g. before answering that a realm does not exist. */
  realm(name: string, fresh = false): Promise<Realm | undefined> {
    if (fresh) this.#realms.invalidate(name);
    return this.#realms.get(name);
  }

  /** The realm as `realm` would answer it, when the snapshot holds it fresh (Snapshot.peek). */
  peekRealm(name: string): { value: Realm | undefined } | undefined {
    return this.#realms.peek(name);
  }

  /** `fresh`: read the store now (and refresh the snapshot), e.g. before refusing a client at the token endpoint. */
  client(realm: string, clientId: string, fresh = false): Promise<Client | undefined> {
    const key = clientKey(realm, clientId);
    if (fresh) this.#clients.invalidate(key);
    return this.#clients.get(key);
  }

  /**
   * The client read again from the store before Bearer validation refuses its token (a client just
   * created or enabled works at once), unless such a read answered less than `clientReadAgainMs`
   * ago: tokens of a client refused for good (deleted, disabled), sent over and over, cost a few
   * reads a second, not one each.
   */
  clientBeforeRefusal(realm: string, clientId: string): Promise<Client | undefined> {
    return this.#clients.refresh(clientKey(realm, clientId), clientReadAgainMs);
  }

  /** The client as `client` would answer it, when the snapshot holds it fresh (Snapshot.peek): Bearer validation's common case, without a promise. */
  peekClient(realm: string, clientId: string): { value: Client | undefined } | undefined {
    return this.#clients.peek(clientKey(realm, clientId));
  }

  /** Forgets a client this instance has just changed (a revocation through the operator API): the next read is the store's. */
  forgetClient(realm: string, clientId: string): void {
    this.#clients.invalidate(clientKey(realm, clientId));
  }
}

function clientKey(realm: string, clientId: string): string {
  return `${realm}\u0000${clientId}`;
}
