/**
 * The realm's OpenID Provider metadata (OpenID Connect Discovery 1.0 / RFC 8414), with what FAPI
 * 2.0 adds (docs/auth.md, "Discovery and introspection"): the client authentication methods and
 * their algorithms, DPoP's algorithms, certificate-bound tokens, and the mTLS endpoint aliases when
 * TLS client certificates are on.
 */
import { assertionAlgorithms, fapiAlgorithms } from './client-metadata.js';
import { dpopAlgorithms } from './dpop-proof.js';
import { signingAlgorithms } from './signing-algorithms.js';

export interface DiscoveryOptions {
  /** The realm's profile: a `fapi2` realm lists its strong methods and algorithms only. */
  profile: string | null;
  /** Whether the service takes TLS client certificates (`--tls-client-ca`). */
  clientCertificates: boolean;
}

export function discoveryDocument(issuer: string, options: DiscoveryOptions = { profile: null, clientCertificates: false }): Record<string, unknown> {
  const endpoints = `${issuer}/protocol/openid-connect`;
  const fapi2 = options.profile === 'fapi2';
  const strongMethods = ['private_key_jwt', ...(options.clientCertificates ? ['tls_client_auth'] : [])];
  const authMethods = fapi2 ? strongMethods : ['client_secret_basic', 'client_secret_post', ...strongMethods];
  const authAlgorithms = fapi2 ? [...fapiAlgorithms] : [...assertionAlgorithms];
  return {
    issuer,
    token_endpoint: `${endpoints}/token`,
    jwks_uri: `${endpoints}/certs`,
    introspection_endpoint: `${endpoints}/token/introspect`,
    grant_types_supported: ['client_credentials'],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    token_endpoint_auth_methods_supported: authMethods,
    token_endpoint_auth_signing_alg_values_supported: authAlgorithms,
    introspection_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_signing_alg_values_supported: authAlgorithms,
    dpop_signing_alg_values_supported: [...dpopAlgorithms],
    tls_client_certificate_bound_access_tokens: options.clientCertificates,
    ...(options.clientCertificates ? { mtls_endpoint_aliases: { token_endpoint: `${endpoints}/token`, introspection_endpoint: `${endpoints}/token/introspect` } } : {}),
    id_token_signing_alg_values_supported: [...signingAlgorithms],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'azp', 'client_id', 'scope', 'preferred_username', 'backbone_user', 'workstation', 'cnf'],
  };
}
