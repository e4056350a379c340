/**
 * The sandbox data file (docs/sandbox.md, "The data file"): its schema, and a parser whose errors
 * name the field. The project may add fields (signatureAlgorithm, ...) but never renames the
 * documented ones.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { clientMetadataProblem, realmAlgorithmProblem, realmProfiles } from '../auth/client-metadata.js';
import { tokenEndpointAuthMethods, type ClientAuthentication } from '../core/client-registration.js';
import { realmDefaults, signingAlgorithms } from '../auth/signing-algorithms.js';
import {
  checkCoreDates,
  checkCoreMoneyAndOwners,
  checkCoreUniques,
  checkUnique,
  coreDataSections,
  DataFileError,
  describe,
  Identifier,
  toFieldName,
} from '../reference-core/core-data-file.js';

export { DataFileError };

const ScopeToken = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$', description: 'RFC 6749 scope-token' });

/** A public JWK (RFC 7517): its members are checked by the rules of docs/auth.md, "Client metadata and the fapi2 profile" (client-metadata.ts). */
const PublicJwk = Type.Object({ kty: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: true });

export const SandboxClient = Type.Object({
  clientId: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }),
  /** Required for the secret methods; absent for private_key_jwt and tls_client_auth (docs/auth.md, "Client metadata and the fapi2 profile"). */
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 512 })),
  tokenEndpointAuthMethod: Type.Optional(Type.Union(tokenEndpointAuthMethods.map((method) => Type.Literal(method)))),
  jwks: Type.Optional(Type.Object({ keys: Type.Array(PublicJwk, { maxItems: 16 }) })),
  tlsClientAuthSubjectDn: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  dpopBoundAccessTokens: Type.Optional(Type.Boolean()),
  tlsClientCertificateBoundAccessTokens: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  grants: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  scopes: Type.Array(ScopeToken),
  technicalUser: Type.Optional(Identifier('login of the technical user')),
  defaultWorkstation: Type.Optional(Identifier('default workstation id')),
});

export const SandboxRealm = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }),
  accessTokenLifespanSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400 })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  signatureAlgorithm: Type.Optional(Type.Union(signingAlgorithms.map((alg) => Type.Literal(alg)))),
  /** `fapi2`: strong client authentication and sender-constrained tokens only (docs/auth.md, "Client metadata and the fapi2 profile"). */
  profile: Type.Optional(Type.Union(realmProfiles.map((profile) => Type.Literal(profile)))),
  /** DPoP proofs at the token endpoint need a server nonce (RFC 9449 §8). */
  dpopNonce: Type.Optional(Type.Boolean()),
  clients: Type.Optional(Type.Array(SandboxClient)),
});

/** A webhook endpoint of a client (docs/webhooks.md, "Registering endpoints"); loaded once, never overwritten. */
export const SandboxWebhook = Type.Object({
  realm: Type.String({ minLength: 1, maxLength: 64 }),
  clientId: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'absolute http(s) URL' }),
  secret: Type.Optional(Type.String({ pattern: '^whsec_', maxLength: 200, description: 'whsec_ and base64; generated when absent' })),
  eventTypes: Type.Optional(
    Type.Array(Type.Union(['operation.executed', 'operation.rejected', 'termDeposit.matured', 'loanInstallment.overdue'].map((t) => Type.Literal(t)))),
  ),
});

export const SandboxDataFile = Type.Object({
  ...coreDataSections,
  realms: Type.Optional(Type.Array(SandboxRealm)),
  webhooks: Type.Optional(Type.Array(SandboxWebhook)),
});

export type SandboxData = Static<typeof SandboxDataFile>;
export type SandboxRealmData = Static<typeof SandboxRealm>;
export type SandboxClientData = Static<typeof SandboxClient>;
export type SandboxWebhookData = Static<typeof SandboxWebhook>;

const compiled = TypeCompiler.Compile(SandboxDataFile);

/**
 * `named` says where the file's name came from, for a file that does not exist: the flag and
 * variable of the command that read it (`coregate serve`'s by default).
 */
export function readSandboxFile(file: string, named = '--data / COREGATE_DATA'): SandboxData {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new DataFileError(file, '', unreadable(file, error as NodeJS.ErrnoException, named));
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DataFileError(file, '', `is not valid JSON (${(error as Error).message})`);
  }
  return parseSandboxData(value, file);
}

/** Why the file cannot be read, and what to do, in words (issue 12: "cannot be read (ENOENT)"). */
function unreadable(file: string, error: NodeJS.ErrnoException, named: string): string {
  const where = `(looked for ${resolve(file)})`;
  switch (error.code) {
    case 'ENOENT':
      return `does not exist ${where}: check ${named}; the demo data is demo/sandbox.json`;
    case 'EACCES':
    case 'EPERM':
      return `cannot be read: permission denied ${where}`;
    case 'EISDIR':
      return `is a directory, not a JSON file ${where}`;
    default:
      return `cannot be read (${error.code ?? error.message}) ${where}`;
  }
}

/** Checks the shape, then the rules a schema cannot say (real dates, unique ids). */
export function parseSandboxData(value: unknown, file = 'data file'): SandboxData {
  const first = compiled.Errors(value).First();
  if (first) throw new DataFileError(file, toFieldName(first.path), describe(first.schema, first.message));
  const data = value as SandboxData;
  checkCoreDates(data, file);
  checkUnique(file, 'realms', (data.realms ?? []).map((r) => r.name), 'name');
  (data.realms ?? []).forEach((realm, index) =>
    checkUnique(file, `realms[${index}].clients`, (realm.clients ?? []).map((c) => c.clientId), 'clientId'),
  );
  checkClientMetadata(data, file);
  checkCoreUniques(data, file);
  checkCoreMoneyAndOwners(data, file);
  return data;
}

/** A data file client's authentication and binding (docs/auth.md, "Client metadata and the fapi2 profile"): the file's names, as the store keeps them. */
export function clientAuthenticationOf(client: SandboxClientData): ClientAuthentication {
  return {
    method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
    jwks: client.jwks ?? null,
    tlsSubjectDn: client.tlsClientAuthSubjectDn ?? null,
    dpopBound: client.dpopBoundAccessTokens ?? false,
    certificateBound: client.tlsClientCertificateBoundAccessTokens ?? false,
  };
}

/** The algorithm a realm of the file signs with: its own, else PS256 in a `fapi2` realm, else the default. */
export function realmSigningAlgorithm(realm: SandboxRealmData): string {
  return realm.signatureAlgorithm ?? (realm.profile === 'fapi2' ? 'PS256' : realmDefaults.signingAlg);
}

/** Each client's one authentication method, and a `fapi2` realm's rules, named by field (docs/auth.md, "Client metadata and the fapi2 profile"). */
function checkClientMetadata(data: SandboxData, file: string): void {
  (data.realms ?? []).forEach((realm, i) => {
    const profile = realm.profile ?? null;
    const algorithm = realmAlgorithmProblem(profile, realmSigningAlgorithm(realm));
    if (algorithm) throw new DataFileError(file, `realms[${i}].${algorithm.field}`, algorithm.message);
    (realm.clients ?? []).forEach((client, j) => {
      const problem = clientMetadataProblem(profile, clientAuthenticationOf(client), client.secret !== undefined);
      if (problem) throw new DataFileError(file, `realms[${i}].clients[${j}].${problem.field}`, problem.message);
    });
  });
}

