/**
 * Operator commands that work on the store directly: client onboarding, key rotation, realm and
 * client not-before. A generated secret is printed once, to stdout, and never again.
 */
import { randomUUID } from 'node:crypto';
import { dateOf, epochSecondsOf } from '../core/clock.js';
import { generateClientSecret, hashClientSecret, noSecretHash } from '../auth/client-secret.js';
import { KeyFileError, readPublicKeys } from './key-file.js';
import { isSigningAlgorithm, realmDefaults, signingAlgorithms, type SigningAlgorithm } from '../auth/signing-algorithms.js';
import { clientMetadataProblem, realmAlgorithmProblem, realmProfiles, type RealmProfile } from '../auth/client-metadata.js';
import { isTokenEndpointAuthMethod, tokenEndpointAuthMethods, usesSecret, type ClientAuthentication, type ClientJwks } from '../core/client-registration.js';
import { loadSecretHashKey } from '../auth/secret-hash-key.js';
import { findClient, insertClientIfMissing, listClients, revokeClientTokens, setClientEnabled, updateClientJwks, updateClientSecretHash } from '../store/clients.js';
import { openStore, type Store } from '../store/connect.js';
import { findRealm, insertRealmIfMissing, listRealms, setRealmNotBefore } from '../store/realms.js';
import { listSigningKeys } from '../store/signing-keys.js';
import { checkEverything } from './check.js';
import { coreUrlOf, withCore, withEmbeddedCore } from './core-session.js';
import { recordedRemoteCore, remoteCoreRefusal } from '../sandbox/core-placement.js';
import { CoreDataRefused, type CoreRecords } from '../core/port.js';
import { defaultDbUrl } from '../config.js';
import { operatorScope } from '../core/scopes.js';
import { operationScopes } from '../operations/registry.js';
import { exportAudit, extendAuditChain, isChainBusy, verifyAuditChain } from '../audit/chain.js';

export { CommandError } from './command-error.js';
import { CommandError } from './command-error.js';
import { withSealingStore, withStoreReadOnly, type StoreFlags } from './store-session.js';

export type { StoreFlags };

/** The signing keys' module (jose), loaded by the commands that make keys only: the others start without it. */
const keyring = () => import('../auth/keyring.js');

async function requireRealm(store: Store, name: string) {
  const realm = await findRealm(store.db, name);
  if (!realm) throw new CommandError(`Realm "${name}" does not exist`);
  return realm;
}

export interface CreateClientFlags extends StoreFlags {
  /** The core whose directory holds the technical user and workstation (default: the embedded core on --db). */
  coreUrl?: string;
  realm: string;
  clientId: string;
  scopes: string[];
  technicalUser?: string;
  defaultWorkstation?: string;
  /** The client's one authentication method and its tokens' binding (docs/auth.md, "Client metadata and the fapi2 profile"). */
  authMethod?: string;
  /** The client's public keys (private_key_jwt): a JWK set, a JWK or a PEM public key. */
  jwks?: string;
  tlsSubjectDn?: string;
  dpop?: boolean;
  certificateBound?: boolean;
}

/** The data file's names of a client's metadata (docs/auth.md, "Client metadata and the fapi2 profile"), as this command's flags. */
const metadataFlags: Record<string, string> = { tokenEndpointAuthMethod: '--auth-method', jwks: '--jwks', tlsClientAuthSubjectDn: '--tls-subject-dn', secret: '--auth-method' };

/** The client's authentication and binding from the flags (docs/auth.md, "Client metadata and the fapi2 profile"), before the store is opened. */
function authenticationFromFlags(flags: CreateClientFlags): ClientAuthentication {
  const method = flags.authMethod ?? 'client_secret_basic';
  if (!isTokenEndpointAuthMethod(method)) throw new CommandError(`--auth-method must be one of ${tokenEndpointAuthMethods.join(', ')}, got "${method}"`);
  let jwks: ClientJwks | null = null;
  try {
    if (flags.jwks !== undefined) jwks = readPublicKeys('--jwks', flags.jwks);
  } catch (error) {
    if (error instanceof KeyFileError) throw new CommandError(error.message);
    throw error;
  }
  return { method, jwks, tlsSubjectDn: flags.tlsSubjectDn ?? null, dpopBound: flags.dpop === true, certificateBound: flags.certificateBound === true };
}

/** Scopes may be given as several arguments, or comma- or space-separated. */
export function splitScopes(values: string[]): string[] {
  return [...new Set(values.flatMap((value) => value.split(/[\s,]+/)).filter((scope) => scope !== ''))];
}

/** Every scope the service knows (the operations' from the registry, and the operator API's): a client granted another one could never use it. */
export const knownScopes: readonly string[] = [...Object.keys(operationScopes), operatorScope];

/** The known scope a misspelt one was meant to be, when one is close (edit distance at most 3). */
export function closestScope(scope: string): string | undefined {
  let best: { scope: string; distance: number } | undefined;
  for (const known of knownScopes) {
    const distance = editDistance(scope.toLowerCase(), known.toLowerCase());
    if (distance <= 3 && (!best || distance < best.distance)) best = { scope: known, distance };
  }
  return best?.scope;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return previous[b.length]!;
}

export async function createClient(flags: CreateClientFlags & { createMissing?: boolean }): Promise<{ clientId: string; secret: string | undefined; authMethod: string; created: string[] }> {
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(flags.clientId)) {
    throw new CommandError('--client-id must be 1-128 characters of A-Z a-z 0-9 . _ : -');
  }
  const scopes = splitScopes(flags.scopes);
  if (scopes.length === 0) throw new CommandError('--scopes needs at least one scope');
  for (const scope of scopes.filter((candidate) => !knownScopes.includes(candidate))) {
    const closest = closestScope(scope);
    throw new CommandError(`Unknown scope "${scope}"${closest ? `: did you mean "${closest}"?` : '.'} The known scopes are ${knownScopes.join(', ')}.`);
  }
  const authentication = authenticationFromFlags(flags);
  return withSealingStore(flags, async (store, vault) => {
    const realm = await requireRealm(store, flags.realm);
    const problem = clientMetadataProblem(realm.profile as RealmProfile | null, authentication, usesSecret(authentication.method));
    if (problem) throw new CommandError(`${metadataFlags[problem.field.split('.')[0] ?? ''] ?? problem.field}: ${problem.field.startsWith('jwks.') ? `${problem.field} ` : ''}${problem.message}`);
    // A client whose technical user or workstation the directory does not know gets 403 on every
    // call: say so now, or add them (Active) with --create-missing. The directory is the core's:
    // asked through the port (the embedded core on --db, or --core-url).
    const created = flags.technicalUser === undefined && flags.defaultWorkstation === undefined ? [] : await ensureDirectoryEntries(flags);
    const secret = usesSecret(authentication.method) ? generateClientSecret() : undefined;
    const now = dateOf(flags.clock).toISOString();
    const inserted = await insertClientIfMissing(store.db, {
      realm: flags.realm,
      clientId: flags.clientId,
      serviceAccountId: randomUUID(),
      secretHash: secret === undefined ? noSecretHash : hashClientSecret(await loadSecretHashKey(store.db, vault), secret),
      enabled: true,
      grants: ['client_credentials'],
      scopes,
      technicalUser: flags.technicalUser ?? null,
      defaultWorkstation: flags.defaultWorkstation ?? null,
      createdAt: now,
      updatedAt: now,
      authentication,
    });
    if (!inserted) throw new CommandError(`Client "${flags.clientId}" already exists in realm "${flags.realm}"`);
    return { clientId: flags.clientId, secret, authMethod: authentication.method, created };
  });
}

/** The client's technical user and default workstation, checked in (or, with --create-missing, added to) the core's directory. */
async function ensureDirectoryEntries(flags: CreateClientFlags & { createMissing?: boolean }): Promise<string[]> {
  return withCore(flags, 'coregate clients create --technical-user/--default-workstation', async (core) => {
    const missing: Array<{ kind: 'user' | 'workstation'; id: string; flag: string; command: string }> = [];
    if (flags.technicalUser !== undefined && (await core.userStatus(flags.technicalUser)) === undefined) {
      missing.push({ kind: 'user', id: flags.technicalUser, flag: '--technical-user', command: `coregate users add ${flags.technicalUser}` });
    }
    if (flags.defaultWorkstation !== undefined && (await core.workstationStatus(flags.defaultWorkstation)) === undefined) {
      missing.push({ kind: 'workstation', id: flags.defaultWorkstation, flag: '--default-workstation', command: `coregate workstations add ${flags.defaultWorkstation}` });
    }
    if (missing.length > 0 && !flags.createMissing) {
      const what = missing.map((entry) => `${entry.flag} ${entry.id} is not in the directory`).join('; ');
      throw new CommandError(`${what}: every call of the client would be refused (403). Add ${missing.length === 1 ? 'it' : 'them'} with ${missing.map((entry) => `\`${entry.command}\``).join(' and ')}, or pass --create-missing`);
    }
    if (missing.length === 0) return [];
    const users = missing.filter((entry) => entry.kind === 'user').map((entry) => ({ login: entry.id, status: 'Active' }));
    const workstations = missing.filter((entry) => entry.kind === 'workstation').map((entry) => ({ id: entry.id, status: 'Active' }));
    try {
      await core.loadData({ ...(users.length > 0 ? { users } : {}), ...(workstations.length > 0 ? { workstations } : {}) });
    } catch (error) {
      if (error instanceof CoreDataRefused) throw new CommandError(`${error.field}: ${error.message}`);
      throw error;
    }
    return missing.map((entry) => `${entry.kind} ${entry.id}`);
  });
}

export async function rotateClientSecret(flags: StoreFlags & { realm: string; clientId: string }): Promise<string> {
  return withSealingStore(flags, async (store, vault) => {
    await requireRealm(store, flags.realm);
    const existing = await findClient(store.db, flags.realm, flags.clientId);
    if (existing && !usesSecret(existing.authentication.method)) {
      throw new CommandError(`Client "${flags.clientId}" authenticates with ${existing.authentication.method}: it has no secret to rotate (replace its keys or certificate instead)`);
    }
    const secret = generateClientSecret();
    // The tokens obtained with the old secret are revoked with it (docs/auth.md, "Client revocation").
    const updated = await updateClientSecretHash(store.db, flags.realm, flags.clientId, hashClientSecret(await loadSecretHashKey(store.db, vault), secret), flags.clock.now());
    if (!updated) throw new CommandError(`Client "${flags.clientId}" does not exist in realm "${flags.realm}"`);
    return secret;
  });
}

/** Enables or disables a client; disabling revokes its tokens, and enabling it again does not bring them back. */
export async function setClientState(flags: StoreFlags & { realm: string; clientId: string }, enabled: boolean): Promise<void> {
  await withSealingStore(flags, async (store) => {
    await requireRealm(store, flags.realm);
    if (!(await setClientEnabled(store.db, flags.realm, flags.clientId, enabled, flags.clock.now()))) {
      throw new CommandError(`Client "${flags.clientId}" does not exist in realm "${flags.realm}"`);
    }
  });
}

/**
 * Revokes every token one client holds, leaving the realm's other clients alone: its not-before
 * becomes the first whole second after now (docs/auth.md, "Client revocation"). Answers it.
 */
export async function revokeClientTokensCommand(flags: StoreFlags & { realm: string; clientId: string }): Promise<number> {
  return withSealingStore(flags, async (store) => {
    await requireRealm(store, flags.realm);
    const notBefore = await revokeClientTokens(store.db, flags.realm, flags.clientId, flags.clock.now());
    if (notBefore === undefined) throw new CommandError(`Client "${flags.clientId}" does not exist in realm "${flags.realm}"`);
    return notBefore;
  });
}

/**
 * Replaces a private_key_jwt client's public keys (`--jwks`: a JWK set, a JWK or a PEM public key),
 * checked as `clients create` checks them; the tokens obtained with the old keys are revoked.
 */
export async function setClientKeys(flags: StoreFlags & { realm: string; clientId: string; jwks: string }): Promise<{ clientId: string; kids: string[]; tokensNotBefore: number }> {
  let jwks: ClientJwks;
  try {
    jwks = readPublicKeys('--jwks', flags.jwks);
  } catch (error) {
    if (error instanceof KeyFileError) throw new CommandError(error.message);
    throw error;
  }
  return withSealingStore(flags, async (store) => {
    const realm = await requireRealm(store, flags.realm);
    const existing = await findClient(store.db, flags.realm, flags.clientId);
    if (!existing) throw new CommandError(`Client "${flags.clientId}" does not exist in realm "${flags.realm}"`);
    if (existing.authentication.method !== 'private_key_jwt') {
      throw new CommandError(`Client "${flags.clientId}" authenticates with ${existing.authentication.method}: only a private_key_jwt client has keys${usesSecret(existing.authentication.method) ? ' (coregate clients rotate-secret gives it a new secret)' : ''}`);
    }
    const problem = clientMetadataProblem(realm.profile as RealmProfile | null, { ...existing.authentication, jwks }, false);
    if (problem) throw new CommandError(`--jwks: ${problem.field.startsWith('jwks.') ? `${problem.field} ` : ''}${problem.message}`);
    await updateClientJwks(store.db, flags.realm, flags.clientId, jwks, flags.clock.now());
    const stored = await findClient(store.db, flags.realm, flags.clientId);
    return { clientId: flags.clientId, kids: jwks.keys.map((key) => (typeof key.kid === 'string' ? key.kid : '-')), tokensNotBefore: stored?.tokensNotBefore ?? 0 };
  });
}

/** Client descriptions without any secret material: not even the hash leaves the store. */
export async function describeClients(flags: StoreFlags & { realm: string }) {
  return withStoreReadOnly(flags, async (store) => {
    await requireRealm(store, flags.realm);
    return (await listClients(store.db, flags.realm)).map((client) => ({
      clientId: client.clientId,
      enabled: client.enabled,
      grants: client.grants,
      scopes: client.scopes,
      technicalUser: client.technicalUser,
      defaultWorkstation: client.defaultWorkstation,
      createdAt: client.createdAt,
      updatedAt: client.updatedAt,
      tokenEndpointAuthMethod: client.authentication.method,
      dpopBoundAccessTokens: client.authentication.dpopBound,
      tlsClientCertificateBoundAccessTokens: client.authentication.certificateBound,
      tokensNotBefore: client.tokensNotBefore,
    }));
  });
}

export async function rotateKeys(flags: StoreFlags & { realm: string; alg?: string }): Promise<string> {
  if (flags.alg !== undefined && !isSigningAlgorithm(flags.alg)) throw new CommandError(`--alg must be ${signingAlgorithms.join(', ')}`);
  return withSealingStore(flags, async (store, vault) => {
    const realm = await requireRealm(store, flags.realm);
    // A fapi2 realm keeps signing PS256, ES256 or EdDSA (docs/auth.md, "Client metadata and the
    // fapi2 profile").
    const algorithmProblem = flags.alg === undefined ? undefined : realmAlgorithmProblem(realm.profile as RealmProfile | null, flags.alg);
    if (algorithmProblem) throw new CommandError(`--alg: ${algorithmProblem.message}`);
    const { rotateSigningKey } = await keyring();
    return rotateSigningKey(store, vault, flags.realm, flags.clock.now(), flags.alg as SigningAlgorithm | undefined);
  });
}

export async function describeKeys(flags: StoreFlags & { realm: string }) {
  return withStoreReadOnly(flags, async (store) => {
    await requireRealm(store, flags.realm);
    return (await listSigningKeys(store.db, flags.realm)).map((key) => ({
      kid: key.kid,
      alg: key.alg,
      createdAt: key.created_at,
      status: key.retired_at === null ? 'active' : 'retired',
      retiredAt: key.retired_at === null ? null : new Date(key.retired_at * 1000).toISOString(),
    }));
  });
}

/**
 * Sets the realm's not-before to the first whole second after now: every token issued until
 * this moment carries an earlier `iat` and is refused; tokens issued from now on are not.
 */
export async function revokeRealmTokens(flags: StoreFlags & { realm: string }): Promise<number> {
  return withSealingStore(flags, async (store) => {
    await requireRealm(store, flags.realm);
    const notBefore = epochSecondsOf(flags.clock) + 1;
    await setRealmNotBefore(store.db, flags.realm, notBefore);
    return notBefore;
  });
}

/** A new realm with its first signing key (sealed with the master key when one is set). */
export async function createRealm(flags: StoreFlags & { realm: string; audience?: string; lifespan?: string; alg?: string; profile?: string; dpopNonce?: boolean }) {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(flags.realm)) throw new CommandError('--realm must be 1-64 characters of A-Z a-z 0-9 . _ -');
  const lifespan = Number(flags.lifespan ?? realmDefaults.lifespanSeconds);
  if (!Number.isInteger(lifespan) || lifespan < 30 || lifespan > 86_400) throw new CommandError(`--lifespan must be whole seconds from 30 to 86400, got "${flags.lifespan}"`);
  const profile = flags.profile ?? null;
  if (profile !== null && !(realmProfiles as readonly string[]).includes(profile)) throw new CommandError(`--profile must be ${realmProfiles.join(' or ')}, got "${profile}"`);
  const alg = flags.alg ?? (profile === 'fapi2' ? 'PS256' : realmDefaults.signingAlg);
  if (!isSigningAlgorithm(alg)) throw new CommandError(`--alg must be ${signingAlgorithms.join(', ')}`);
  const algorithmProblem = realmAlgorithmProblem(profile as RealmProfile | null, alg);
  if (algorithmProblem) throw new CommandError(`--alg: ${algorithmProblem.message}`);
  return withSealingStore(flags, async (store, vault) => {
    if (await findRealm(store.db, flags.realm)) throw new CommandError(`Realm "${flags.realm}" already exists`);
    await insertRealmIfMissing(store.db, {
      name: flags.realm,
      audience: flags.audience ?? realmDefaults.audience,
      lifespan_seconds: lifespan,
      signing_alg: alg,
      not_before: 0,
      key_generation: 0,
      created_at: dateOf(flags.clock).toISOString(),
      profile,
      dpop_nonce: flags.dpopNonce === true ? 1 : 0,
    });
    const stored = await findRealm(store.db, flags.realm);
    if (stored) await (await keyring()).ensureSigningKey(store.db, vault, stored, flags.clock.now());
    return { name: flags.realm, audience: flags.audience ?? realmDefaults.audience, accessTokenLifespanSeconds: lifespan, signatureAlgorithm: alg, profile, dpopNonce: flags.dpopNonce === true };
  });
}

export async function describeRealms(flags: StoreFlags) {
  return withStoreReadOnly(flags, async (store) =>
    (await listRealms(store.db)).map((realm) => ({
      name: realm.name,
      audience: realm.audience,
      accessTokenLifespanSeconds: realm.lifespan_seconds,
      signatureAlgorithm: realm.signing_alg,
      notBefore: realm.not_before,
      profile: realm.profile,
    })),
  );
}

/**
 * `coregate check` (src/cli/check.ts): ledger, operations, unknown outcomes, audit chain. The
 * ledger is the core's, proved through the port: `--core-url` asks a remote core; `--core-db`
 * opens the reference core's own database (when you run it and hold it); otherwise the embedded
 * core on `--db`, refused when that database's core is remote (it holds no ledger then).
 */
export async function checkStore(flags: StoreFlags & { coreUrl?: string; coreDb?: string; unknownAgeLimit?: string }) {
  const ageLimitSeconds = Number(flags.unknownAgeLimit ?? flags.env.COREGATE_UNKNOWN_AGE_LIMIT_SECONDS ?? '300');
  if (!Number.isInteger(ageLimitSeconds) || ageLimitSeconds < 1) throw new CommandError(`--unknown-age-limit must be a positive integer, got "${flags.unknownAgeLimit}"`);
  if (flags.coreDb !== undefined && coreUrlOf(flags) !== undefined) throw new CommandError('--core-url and --core-db name the core twice: give one (--core-url when the core runs as a service)');
  return withStoreReadOnly(flags, async (store) => {
    const check = (core: CoreRecords) => checkEverything(store, core, ageLimitSeconds, { masterKey: flags.env.COREGATE_MASTER_KEY, clock: flags.clock });
    if (flags.coreDb !== undefined) return withEmbeddedCore(flags.coreDb, 'coregate check', flags.clock, check);
    if (coreUrlOf(flags) !== undefined) return withCore(flags, 'coregate check', check);
    const recorded = await recordedRemoteCore(store.db);
    if (recorded !== undefined) throw new CommandError(remoteCoreRefusal('coregate check', recorded));
    // The embedded core on the same database, through the port like any other core.
    return withEmbeddedCore(flags.db ?? flags.env.COREGATE_DB ?? defaultDbUrl, 'coregate check', flags.clock, check);
  });
}

/** `coregate audit verify`: chains what is committed but unchained, then verifies every link. */
export async function verifyAudit(flags: StoreFlags) {
  return withStoreReadOnly(flags, async (store) => {
    await extendChainIfFree(store);
    return verifyAuditChain(store);
  });
}

/** `coregate audit export`: every record as one JSON line, in chain order. */
export async function exportAuditLines(flags: StoreFlags, write: (line: string) => void): Promise<number> {
  return withStoreReadOnly(flags, async (store) => {
    await extendChainIfFree(store);
    let count = 0;
    for await (const entry of exportAudit(store)) {
      write(`${JSON.stringify(entry)}\n`);
      count += 1;
    }
    return count;
  });
}

/**
 * Chains what is committed but unchained; when a running server holds the chain's lock (SQLite's
 * write lock, or PostgreSQL's advisory lock past its time-out) it is chaining right now itself,
 * so the command verifies what is chained instead of failing.
 */
async function extendChainIfFree(store: Store): Promise<void> {
  try {
    await extendAuditChain(store);
  } catch (error) {
    if (!isChainBusy(error)) throw error;
  }
}
