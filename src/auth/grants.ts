/**
 * Grant types, as a table keyed by `grant_type` (oidc-provider's shape). client_credentials is the
 * only supported grant (docs/auth.md, "Token request pipeline"); the other OAuth grants are known
 * so that a client asking for one gets `unauthorized_client`, and anything else
 * `unsupported_grant_type`.
 */
export const supportedGrants = new Set(['client_credentials']);

export const knownOAuthGrants = new Set([
  'authorization_code',
  'client_credentials',
  'password',
  'refresh_token',
  'implicit',
  'urn:ietf:params:oauth:grant-type:device_code',
  'urn:ietf:params:oauth:grant-type:token-exchange',
  'urn:ietf:params:oauth:grant-type:jwt-bearer',
  'urn:ietf:params:oauth:grant-type:saml2-bearer',
  'urn:ietf:params:oauth:grant-type:uma-ticket',
  'urn:openid:params:grant-type:ciba',
]);
