/**
 * The token endpoint: every step of docs/auth.md, "Token request pipeline", and what "The token"
 * says of its answer, in Keycloak's order, on each store, over real HTTP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { basicAuth, demo, postForm } from '../helpers/server.js';
import { describeEachStore } from '../helpers/suite.js';
import { assertOAuthError } from '../helpers/error-record.js';

const { treasury, branch, reporting } = demo;
const grant = { grant_type: 'client_credentials' };
const asTreasury = { ...grant, client_id: treasury.clientId, client_secret: treasury.secret };
const asBranch = { ...grant, client_id: branch.clientId, client_secret: branch.secret };
const asReporting = { ...grant, client_id: reporting.clientId, client_secret: reporting.secret };

describeEachStore('token endpoint', ({ server }) => {
  const tokenUrl = () => server().tokenUrl();

  test('success: exactly the documented fields, Bearer, refresh_expires_in 0, no-store', async () => {
    const response = await postForm(tokenUrl(), asTreasury);
    assert.equal(response.status, 200);
    assert.deepEqual(Object.keys(response.body).sort(), [
      'access_token',
      'expires_in',
      'not-before-policy',
      'refresh_expires_in',
      'scope',
      'token_type',
    ]);
    assert.equal(response.body.token_type, 'Bearer');
    assert.equal(response.body.refresh_expires_in, 0);
    assert.equal(response.body.expires_in, 300);
    assert.equal(response.body['not-before-policy'], 0);
    assert.equal(response.body.scope, 'termDeposit:initiate termDeposit:retrieve merchandisingLoan:execute');
    assert.equal(response.headers.get('cache-control'), 'no-store');
    assert.equal(response.headers.get('pragma'), 'no-cache');
  });

  test('claims: iss, sub, azp, client_id, aud, iat, exp, jti, typ, scope, preferred_username', async () => {
    const response = await postForm(tokenUrl(), asBranch);
    const header = decodeProtectedHeader(response.body.access_token);
    assert.equal(header.alg, 'RS256');
    assert.equal(header.typ, 'JWT');
    assert.equal(typeof header.kid, 'string');
    const claims = decodeJwt(response.body.access_token);
    assert.equal(claims.iss, `${server().coregate.publicUrl}/realms/sandbox`);
    assert.match(String(claims.sub), /^[0-9a-f-]{36}$/);
    assert.equal(claims.azp, branch.clientId);
    assert.equal(claims.client_id, branch.clientId);
    assert.equal(claims.aud, 'coregate-api');
    assert.equal(claims.typ, 'Bearer');
    assert.equal(claims.scope, 'termDeposit:initiate termDeposit:retrieve');
    assert.equal(claims.preferred_username, 'service-account-branch-portal');
    assert.equal(typeof claims.jti, 'string');
    assert.equal(Number(claims.exp) - Number(claims.iat), 300);
    assert.ok(Math.abs(Number(claims.iat) - Date.now() / 1000) < 5);
  });

  test('sub is the stable id of the client\'s service account', async () => {
    const first = decodeJwt((await postForm(tokenUrl(), asBranch)).body.access_token);
    const second = decodeJwt((await postForm(tokenUrl(), asBranch)).body.access_token);
    const other = decodeJwt((await postForm(tokenUrl(), asReporting)).body.access_token);
    assert.equal(first.sub, second.sub);
    assert.notEqual(first.jti, second.jti);
    assert.notEqual(first.sub, other.sub);
  });

  test('client_secret_basic authenticates like client_secret_post', async () => {
    const response = await postForm(tokenUrl(), grant, { authorization: basicAuth(treasury.clientId, treasury.secret) });
    assert.equal(response.status, 200);
    assert.equal(decodeJwt(response.body.access_token).client_id, treasury.clientId);
  });

  test('client_secret_basic with the client_id also in the form is accepted when they agree', async () => {
    const response = await postForm(
      tokenUrl(),
      { ...grant, client_id: treasury.clientId },
      { authorization: basicAuth(treasury.clientId, treasury.secret) },
    );
    assert.equal(response.status, 200);
  });

  // Unknown client_id or wrong client_secret → 401 invalid_client.
  test('401 invalid_client: unknown client_id', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, client_id: 'no-such-client' }), 401, 'invalid_client');
  });

  test('401 invalid_client: wrong client_secret', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, client_secret: 'wrong-secret' }), 401, 'invalid_client');
  });

  test('401 invalid_client: missing client_secret', async () => {
    const { client_secret: _omitted, ...noSecret } = asTreasury;
    assertOAuthError(await postForm(tokenUrl(), noSecret), 401, 'invalid_client');
  });

  test('401 invalid_client: no client authentication at all', async () => {
    assertOAuthError(await postForm(tokenUrl(), grant), 401, 'invalid_client');
  });

  test('401 invalid_client: the same description for unknown client and wrong secret (no enumeration)', async () => {
    const unknown = await postForm(tokenUrl(), { ...asTreasury, client_id: 'no-such-client' });
    const wrong = await postForm(tokenUrl(), { ...asTreasury, client_secret: 'wrong-secret' });
    assert.equal(unknown.body.error_description, wrong.body.error_description);
  });

  test('401 invalid_client with WWW-Authenticate: Basic realm="sandbox" when Basic was used', async () => {
    const response = await postForm(tokenUrl(), grant, { authorization: basicAuth(treasury.clientId, 'wrong-secret') });
    assertOAuthError(response, 401, 'invalid_client');
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="sandbox"');
  });

  test('401 invalid_client: a Basic header that is not base64 id:secret', async () => {
    const response = await postForm(tokenUrl(), grant, { authorization: `Basic ${Buffer.from('no-colon').toString('base64')}` });
    assertOAuthError(response, 401, 'invalid_client');
    assert.equal(response.headers.get('www-authenticate'), 'Basic realm="sandbox"');
  });

  test('401 invalid_client: no WWW-Authenticate when the form was used', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, client_secret: 'wrong-secret' });
    assert.equal(response.headers.get('www-authenticate'), null);
  });

  test('400 invalid_request: Basic and client_secret in the form at once', async () => {
    const response = await postForm(tokenUrl(), asTreasury, { authorization: basicAuth(treasury.clientId, treasury.secret) });
    assertOAuthError(response, 400, 'invalid_request');
  });

  test('400 invalid_request: Basic for one client and client_id of another in the form', async () => {
    const response = await postForm(
      tokenUrl(),
      { ...grant, client_id: branch.clientId },
      { authorization: basicAuth(treasury.clientId, treasury.secret) },
    );
    assertOAuthError(response, 400, 'invalid_request');
  });

  // A grant type other than client_credentials, unknown, or not active.
  test('400 unsupported_grant_type: a grant_type that is no OAuth grant at all', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, grant_type: 'magic' }), 400, 'unsupported_grant_type');
  });

  for (const known of ['password', 'authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code', 'urn:ietf:params:oauth:grant-type:token-exchange']) {
    test(`400 unauthorized_client: known OAuth grant ${known} that the client may not use`, async () => {
      assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, grant_type: known }), 400, 'unauthorized_client');
    });
  }

  test('order: unsupported_grant_type is decided before client authentication', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, grant_type: 'magic', client_secret: 'wrong-secret' });
    assertOAuthError(response, 400, 'unsupported_grant_type');
  });

  test('order: client authentication is decided before unauthorized_client', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, grant_type: 'password', client_secret: 'wrong-secret' });
    assertOAuthError(response, 401, 'invalid_client');
  });

  test('400 invalid_request: missing grant_type', async () => {
    const { grant_type: _omitted, ...noGrant } = asTreasury;
    assertOAuthError(await postForm(tokenUrl(), noGrant), 400, 'invalid_request');
  });

  test('order: missing grant_type is decided before client authentication', async () => {
    assertOAuthError(await postForm(tokenUrl(), { client_id: 'nobody', client_secret: 'x' }), 400, 'invalid_request');
  });

  test('400 invalid_request: a form parameter sent twice', async () => {
    const body = new URLSearchParams(asTreasury);
    body.append('client_id', treasury.clientId);
    assertOAuthError(await postForm(tokenUrl(), body.toString()), 400, 'invalid_request');
  });

  test('400 invalid_request: grant_type sent twice, even with equal values', async () => {
    const body = `${new URLSearchParams(asTreasury).toString()}&grant_type=client_credentials`;
    assertOAuthError(await postForm(tokenUrl(), body), 400, 'invalid_request');
  });

  test('400 invalid_request: a JSON body instead of application/x-www-form-urlencoded', async () => {
    const response = await fetch(tokenUrl(), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(asTreasury),
    });
    assertOAuthError({ status: response.status, headers: response.headers, body: await response.json() }, 400, 'invalid_request');
  });

  test('400 invalid_request: no body and no content type', async () => {
    const response = await fetch(tokenUrl(), { method: 'POST' });
    assertOAuthError({ status: response.status, headers: response.headers, body: await response.json() }, 400, 'invalid_request');
  });

  test('400 invalid_request: form body sent as text/plain', async () => {
    const response = await postForm(tokenUrl(), new URLSearchParams(asTreasury).toString(), { 'content-type': 'text/plain' });
    assertOAuthError(response, 400, 'invalid_request');
  });

  test('the form content type may carry a charset parameter', async () => {
    const response = await postForm(tokenUrl(), asTreasury, { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' });
    assert.equal(response.status, 200);
  });

  test('413 with an OAuth error body: a form body over 16 KiB', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, padding: 'x'.repeat(20_000) });
    assert.equal(response.status, 413);
    assert.equal(response.body.error, 'invalid_request');
  });

  // Scopes: a valid scope field narrows the token; anything outside is invalid_scope.
  test('scope: a subset of the client\'s scopes narrows the token', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, scope: 'termDeposit:retrieve' });
    assert.equal(response.status, 200);
    assert.equal(response.body.scope, 'termDeposit:retrieve');
    assert.equal(decodeJwt(response.body.access_token).scope, 'termDeposit:retrieve');
  });

  test('scope: several scopes separated by spaces', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, scope: 'merchandisingLoan:execute termDeposit:retrieve' });
    assert.equal(response.status, 200);
    assert.deepEqual(response.body.scope.split(' ').sort(), ['merchandisingLoan:execute', 'termDeposit:retrieve']);
  });

  test('400 invalid_scope: a scope outside the client\'s granted scopes', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asReporting, scope: 'termDeposit:initiate' }), 400, 'invalid_scope');
  });

  test('400 invalid_scope: one valid and one unknown scope', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asReporting, scope: 'termDeposit:retrieve admin' }), 400, 'invalid_scope');
  });

  test('order: client authentication is decided before invalid_scope', async () => {
    const response = await postForm(tokenUrl(), { ...asReporting, scope: 'admin', client_secret: 'wrong-secret' });
    assertOAuthError(response, 401, 'invalid_client');
  });

  // username and workstation (docs/auth.md, "Endpoints").
  test('technical user: no username → backbone_user is the technical user, workstation the default', async () => {
    const claims = decodeJwt((await postForm(tokenUrl(), asTreasury)).body.access_token);
    assert.equal(claims.backbone_user, 'svc-treasury');
    assert.equal(claims.workstation, 'WS-TREASURY-01');
  });

  test('username and workstation sent → they are the claims', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, username: 'jdoe', workstation: 'WS-BRANCH-07' });
    const claims = decodeJwt(response.body.access_token);
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-BRANCH-07');
  });

  test('username sent without workstation → the application\'s default workstation', async () => {
    const claims = decodeJwt((await postForm(tokenUrl(), { ...asTreasury, username: 'jdoe' })).body.access_token);
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-TREASURY-01');
  });

  test('no user associated (no username, no technical user) → no backbone_user or workstation claim', async () => {
    const claims = decodeJwt((await postForm(tokenUrl(), asBranch)).body.access_token);
    assert.equal('backbone_user' in claims, false);
    assert.equal('workstation' in claims, false);
  });

  test('no user associated but a workstation sent → still no user claims', async () => {
    const claims = decodeJwt((await postForm(tokenUrl(), { ...asBranch, workstation: 'WS-BRANCH-07' })).body.access_token);
    assert.equal('backbone_user' in claims, false);
    assert.equal('workstation' in claims, false);
  });

  // A user, no workstation, no default workstation → 400 invalid_request.
  test('400 invalid_request: username sent, no workstation, and the client has no default workstation', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asBranch, username: 'jdoe' }), 400, 'invalid_request');
  });

  test('username and workstation sent to a client without defaults → claims', async () => {
    const claims = decodeJwt((await postForm(tokenUrl(), { ...asBranch, username: 'jdoe', workstation: 'WS-BRANCH-07' })).body.access_token);
    assert.equal(claims.backbone_user, 'jdoe');
    assert.equal(claims.workstation, 'WS-BRANCH-07');
  });

  test('the token endpoint does not look username or workstation up in the directory', async () => {
    const response = await postForm(tokenUrl(), { ...asTreasury, username: 'former-clerk', workstation: 'WS-NOT-IN-DIRECTORY' });
    assert.equal(response.status, 200);
    assert.equal(decodeJwt(response.body.access_token).backbone_user, 'former-clerk');
  });

  test('400 invalid_request: username longer than 128 characters', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, username: 'u'.repeat(129) }), 400, 'invalid_request');
  });

  test('username of exactly 128 characters is accepted', async () => {
    assert.equal((await postForm(tokenUrl(), { ...asTreasury, username: 'u'.repeat(128) })).status, 200);
  });

  test('400 invalid_request: workstation longer than 128 characters', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, workstation: 'w'.repeat(129) }), 400, 'invalid_request');
  });

  test('400 invalid_request: username with a control character', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, username: 'jdoe\nadmin' }), 400, 'invalid_request');
  });

  test('400 invalid_request: workstation with a control character', async () => {
    assertOAuthError(await postForm(tokenUrl(), { ...asTreasury, workstation: 'WS\u0000-1' }), 400, 'invalid_request');
  });

  test('404 with an OAuth-style error: unknown realm', async () => {
    const response = await postForm(server().tokenUrl('no-such-realm'), asTreasury);
    assert.equal(response.status, 404);
    assert.equal(typeof response.body.error, 'string');
    assert.equal(typeof response.body.error_description, 'string');
  });

  test('a client of one realm is unknown in another (unknown realm → 404 before authentication)', async () => {
    const response = await fetch(`${server().realmUrl('other')}/protocol/openid-connect/certs`);
    assert.equal(response.status, 404);
  });
});
