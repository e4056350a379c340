/**
 * How a client is registered to authenticate and what its tokens are bound to (docs/auth.md,
 * "Client metadata and the fapi2 profile"; RFC 7591's names in camelCase): what the store keeps of
 * a client, below the rules that check it (src/auth/client-metadata.ts) and the endpoints that use
 * it (src/auth).
 */

/**
 * How a client proves itself at the token and introspection endpoints. The two secret methods are
 * one (either way of sending the secret is accepted: docs/auth.md, "Endpoints"); the others never
 * take a secret.
 */
export const tokenEndpointAuthMethods = ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'tls_client_auth'] as const;
export type TokenEndpointAuthMethod = (typeof tokenEndpointAuthMethods)[number];

export function isTokenEndpointAuthMethod(value: string): value is TokenEndpointAuthMethod {
  return (tokenEndpointAuthMethods as readonly string[]).includes(value);
}

export function usesSecret(method: TokenEndpointAuthMethod): boolean {
  return method === 'client_secret_basic' || method === 'client_secret_post';
}

/** A public JWK as a client registers it: at least its key type. */
export interface ClientJwk {
  kty: string;
  [member: string]: unknown;
}

export interface ClientJwks {
  keys: ClientJwk[];
}

export interface ClientAuthentication {
  method: TokenEndpointAuthMethod;
  /** The client's public keys (private_key_jwt). */
  jwks: ClientJwks | null;
  /** The subject DN of its TLS client certificate (tls_client_auth). */
  tlsSubjectDn: string | null;
  /** Its tokens are DPoP-bound: a proof is required at the token endpoint. */
  dpopBound: boolean;
  /** Its tokens are bound to its TLS client certificate. */
  certificateBound: boolean;
}
