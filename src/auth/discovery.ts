/** The realm's OpenID Provider metadata (OpenID Connect Discovery 1.0 / RFC 8414). */
import { signingAlgorithms } from './signing-algorithms.js';

export function discoveryDocument(issuer: string): Record<string, unknown> {
  const endpoints = `${issuer}/protocol/openid-connect`;
  const authMethods = ['client_secret_basic', 'client_secret_post'];
  return {
    issuer,
    token_endpoint: `${endpoints}/token`,
    jwks_uri: `${endpoints}/certs`,
    introspection_endpoint: `${endpoints}/token/introspect`,
    grant_types_supported: ['client_credentials'],
    response_types_supported: ['token'],
    subject_types_supported: ['public'],
    token_endpoint_auth_methods_supported: authMethods,
    introspection_endpoint_auth_methods_supported: authMethods,
    id_token_signing_alg_values_supported: [...signingAlgorithms],
    claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'azp', 'client_id', 'scope', 'preferred_username', 'backbone_user', 'workstation'],
  };
}
