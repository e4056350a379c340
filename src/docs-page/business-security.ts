/** The security schemes' names, and a business route's security: in a module of its own, so that the routes need none of the docs page's text. */
export const oauthScheme = 'oauth2';
export const bearerScheme = 'bearer';
export const dpopScheme = 'dpop';

/** A business route's security: either scheme, with the route's scope. */
export function businessSecurity(scope: string | undefined): Array<Record<string, string[]>> {
  const scopes = scope === undefined ? [] : [scope];
  return [{ [oauthScheme]: scopes }, { [bearerScheme]: scopes }, { [dpopScheme]: scopes }];
}
