/**
 * A client's authentication and token binding (docs/auth.md, "Client metadata and the fapi2
 * profile"; RFC 7591's names in camelCase), and the rules of a realm's `fapi2` profile: checked
 * where a client comes in (the data file, `coregate clients create`), so that a realm never holds a
 * client it would have to refuse. Imports nothing but the DN reader: the CLI checks its flags
 * without loading jose.
 */
import { normalizedDistinguishedName } from './distinguished-name.js';
import { usesSecret, type ClientAuthentication, type ClientJwk } from '../core/client-registration.js';


/** FAPI 2.0's algorithms (§5.4.1): client assertions, DPoP proofs and a `fapi2` realm's tokens. */
export const fapiAlgorithms = ['PS256', 'ES256', 'EdDSA'] as const;
/** A client assertion outside a `fapi2` realm may also be RS256 (docs/auth.md, "private_key_jwt"); never `none` or HMAC. */
export const assertionAlgorithms = ['PS256', 'ES256', 'EdDSA', 'RS256'] as const;

export const realmProfiles = ['fapi2'] as const;
export type RealmProfile = (typeof realmProfiles)[number];


/** Members that only a private or symmetric key has (RFC 7518 §6): never in a client's registered keys, nor in a DPoP proof's header. */
export const privateJwkMembers: readonly string[] = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
const publicKeyTypes = ['RSA', 'EC', 'OKP'];

/** What is wrong with a client's metadata, by field name relative to the client; undefined when nothing is. */
export interface MetadataProblem {
  field: string;
  message: string;
}

/**
 * The rules for one client of a realm (docs/auth.md, "Client metadata and the fapi2 profile"): the
 * method's own needs (keys, a subject DN, a secret or none) and, in a `fapi2` realm, strong
 * authentication only.
 */
export function clientMetadataProblem(profile: RealmProfile | null, client: ClientAuthentication, hasSecret: boolean): MetadataProblem | undefined {
  const { method } = client;
  if (profile === 'fapi2' && usesSecret(method)) {
    return { field: 'tokenEndpointAuthMethod', message: `a client of a fapi2 realm authenticates with private_key_jwt or tls_client_auth, not ${method} (a shared secret)` };
  }
  if (usesSecret(method)) {
    if (!hasSecret) return { field: 'secret', message: `${method} needs a secret` };
  } else if (hasSecret) {
    return { field: 'secret', message: `a ${method} client has no secret: leave it out (one authentication method per client)` };
  }
  if (method === 'private_key_jwt') {
    const keys = client.jwks?.keys;
    if (keys === undefined || keys.length === 0) return { field: 'jwks', message: 'private_key_jwt needs the client\'s public keys: {"keys": [ ... ]}' };
    for (const [index, key] of keys.entries()) {
      if (!publicKeyTypes.includes(key.kty)) return { field: `jwks.keys[${index}].kty`, message: `must be one of ${publicKeyTypes.join(', ')} (an asymmetric key), got ${JSON.stringify(key.kty)}` };
      const secretPart = privateJwkMembers.find((member) => member in key);
      if (secretPart !== undefined) return { field: `jwks.keys[${index}].${secretPart}`, message: 'is part of a private key: register the public key only' };
    }
  } else if (client.jwks !== null) {
    return { field: 'jwks', message: `only a private_key_jwt client has keys here (this one is ${method})` };
  }
  if (method === 'tls_client_auth') {
    if (client.tlsSubjectDn === null || client.tlsSubjectDn.trim() === '') return { field: 'tlsClientAuthSubjectDn', message: 'tls_client_auth needs the subject DN of the client\'s certificate' };
    if (normalizedDistinguishedName(client.tlsSubjectDn) === undefined) {
      return { field: 'tlsClientAuthSubjectDn', message: `${JSON.stringify(client.tlsSubjectDn)} is not a DN (RFC 4514, e.g. "CN=partner-app,O=Partner Bank,C=DE")` };
    }
  } else if (client.tlsSubjectDn !== null) {
    return { field: 'tlsClientAuthSubjectDn', message: `only a tls_client_auth client has a subject DN (this one is ${method})` };
  }
  return undefined;
}

/** A `fapi2` realm's tokens are signed PS256, ES256 or EdDSA (docs/auth.md, "Client metadata and the fapi2 profile"). */
export function realmAlgorithmProblem(profile: RealmProfile | null, signatureAlgorithm: string): MetadataProblem | undefined {
  if (profile !== 'fapi2' || (fapiAlgorithms as readonly string[]).includes(signatureAlgorithm)) return undefined;
  return { field: 'signatureAlgorithm', message: `a fapi2 realm signs its tokens with ${fapiAlgorithms.join(', ')}, not ${signatureAlgorithm}` };
}

/**
 * Whether the client's tokens must be DPoP-bound: it asked for it, or its realm is `fapi2` and its
 * tokens are not bound to its certificate (a `fapi2` realm issues sender-constrained tokens only).
 */
export function requiresDpop(profile: RealmProfile | null, client: ClientAuthentication): boolean {
  return client.dpopBound || (profile === 'fapi2' && !client.certificateBound);
}
