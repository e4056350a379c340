/**
 * Request targets in every form (RFC 9112 §3.2; src/request-target.ts) sent to every route of the
 * service with every way of presenting a token: none, a bearer token, a DPoP-bound token sent as
 * Bearer, a DPoP-bound token with a proof signed by someone else's key (an attacker holding a
 * captured token), and with its own key's proof. Never a 5xx and never an error-level log line
 * (anyone could otherwise write them at will); an absolute-form target is answered as its path is,
 * with the path alone in the record, and a DPoP proof is checked against the service's public URL
 * and that path (docs/auth.md); a target that is not a path (the asterisk form, a fragment, text
 * that is no URL) is a 400.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { clientAssertion, dpopProof, fapiMaterial, fapiRealm, keyPair, type KeyPair } from '../helpers/fapi.js';
import { demoToken, startTestServer, type TestServer } from '../helpers/server.js';
import { storeTargets } from '../helpers/stores.js';

interface Answer {
  status: number;
  head: string;
  body: string;
}

/** One request written as raw bytes, whatever its target: clients refuse to send most of these. */
function exchange(server: TestServer, requestLine: string, headers: Array<[string, string]>): Promise<Answer> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      const lines = [requestLine, `Host: ${new URL(server.url).host}`, ...headers.map(([name, value]) => `${name}: ${value}`), 'Connection: close', '', ''];
      socket.write(lines.join('\r\n'));
    });
    const parts: Buffer[] = [];
    socket.on('data', (part: Buffer) => parts.push(part));
    socket.on('error', reject);
    socket.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), head: text.slice(0, split), body: text.slice(split + 4) });
    });
  });
}

/** Every route the server registered, with a concrete path (parameters filled in), from fastify's own route tree. */
function routesOf(server: TestServer): Array<{ method: string; path: string }> {
  const listing = server.coregate.app.printRoutes({ commonPrefix: false });
  const routes: Array<{ method: string; path: string }> = [];
  // Each line is a node of the tree: its depth by its indentation, its segment, its methods.
  const parents: string[] = [];
  for (const line of listing.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    const full = `${parents[depth - 1] ?? ''}${match[2] ?? ''}`;
    parents[depth] = full;
    parents.length = depth + 1;
    const path = full.replace(/:[A-Za-z]+/g, 'X1').replace(/\*/g, 'x');
    for (const method of (match[3] ?? '').split(', ')) if (method !== '' && method !== 'HEAD') routes.push({ method, path });
  }
  return routes;
}

/** The target with what a request line cannot hold (beyond printable ASCII) percent-escaped as UTF-8; the rest as it is. */
function printable(target: string): string {
  return [...target].map((character) => (/^[\x21-\x7e]$/.test(character) ? character : encodeURIComponent(character))).join('');
}

const material = await fapiMaterial();
const target = storeTargets[0];

describe('request targets in every form, to every route, with every scheme', { skip: target?.skip }, () => {
  let server: TestServer;
  let drop: () => Promise<void>;
  let bearer: string;
  let bound: string;
  let ownKey: KeyPair;
  let attackerKey: KeyPair;

  before(async () => {
    const created = await target!.create();
    drop = created.drop;
    server = await startTestServer({ db: created.url, data: material.dataFile, flags: { sandbox: true } });
    bearer = await demoToken(server);
    ownKey = await keyPair('ES256');
    attackerKey = await keyPair('ES256');
    const tokenUrl = `${server.realmUrl(fapiRealm)}/protocol/openid-connect/token`;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await clientAssertion(server.realmUrl(fapiRealm), material.clientKey),
    });
    const granted = await fetch(tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpopProof(ownKey, 'POST', tokenUrl) }, body: form });
    bound = ((await granted.json()) as { access_token: string }).access_token;
  });

  after(async () => {
    await server.close();
    await drop();
  });

  /** The ways of presenting a token to `method path`: each call makes fresh proofs. */
  async function schemes(method: string, path: string): Promise<Array<[string, Array<[string, string]>]>> {
    const htu = `${server.url}${path.split('?')[0]}`;
    return [
      ['no token', []],
      ['bearer token', [['Authorization', `Bearer ${bearer}`]]],
      ['DPoP-bound token as Bearer', [['Authorization', `Bearer ${bound}`]]],
      ['DPoP-bound token, an attacker\'s proof', [['Authorization', `DPoP ${bound}`], ['DPoP', await dpopProof(attackerKey, method, htu, { accessToken: bound })]]],
      ['DPoP-bound token, its own proof', [['Authorization', `DPoP ${bound}`], ['DPoP', await dpopProof(ownKey, method, htu, { accessToken: bound })]]],
    ];
  }

  function errorLines(): string[] {
    return server.logLines.filter((line) => /"level":(50|60)/.test(line));
  }

  test('an absolute-form target is answered as its path is, never a 5xx, and the record names the path alone', async () => {
    const routes = routesOf(server);
    assert.ok(routes.length > 30, `the route list was read (${routes.length} routes)`);
    assert.ok(routes.some((route) => route.path.startsWith('/v1/operations/')) && routes.some((route) => route.path.startsWith('/operator/v1/')) && routes.some((route) => route.path.startsWith('/realms/')));
    const mismatches: string[] = [];
    for (const { method, path } of routes) {
      for (const authority of ['http://attacker.example', 'HTTPS://X:1']) {
        const asPath = await schemes(method, path);
        const asUrl = await schemes(method, path);
        for (let index = 0; index < asPath.length; index += 1) {
          const [scheme, pathHeaders] = asPath[index]!;
          const origin = await exchange(server, `${method} ${path} HTTP/1.1`, pathHeaders);
          const absolute = await exchange(server, `${method} ${authority}${path} HTTP/1.1`, asUrl[index]![1]);
          assert.ok(absolute.status > 0 && absolute.status < 500, `${method} ${authority}${path} with ${scheme}: ${absolute.status} ${absolute.body.slice(0, 200)}`);
          if (absolute.status !== origin.status) mismatches.push(`${method} ${authority}${path} with ${scheme}: ${absolute.status}, as a path ${origin.status}`);
          assert.ok(!absolute.body.includes(authority), `the answer names the path alone, not ${authority}: ${absolute.body.slice(0, 200)}`);
        }
      }
    }
    assert.deepEqual(mismatches, []);
    assert.deepEqual(errorLines(), []);
  });

  test('a DPoP proof of the public URL and the path is accepted for an absolute-form target, whatever authority the target names', async () => {
    const path = '/v1/term-deposits/TD-NONE/retrieve';
    const [, headers] = (await schemes('GET', path))[4]!;
    const answer = await exchange(server, `GET http://attacker.example${path} HTTP/1.1`, headers);
    assert.equal(answer.status, 404, answer.body);
    const [, attacker] = (await schemes('GET', path))[3]!;
    const refused = await exchange(server, `GET http://attacker.example${path} HTTP/1.1`, attacker);
    assert.equal(refused.status, 401, refused.body);
    assert.match(refused.head, /WWW-Authenticate: DPoP error="invalid_dpop_proof"/i);
    assert.deepEqual(errorLines(), []);
  });

  test('a target that is not a path is 400 on every method with every scheme: the asterisk form, a fragment, text that is no URL', async () => {
    const targets = ['*', '/v1/operations/X1#fragment', 'v1/operations/X1', 'http:/v1/x', 'http://', 'http://x#/v1', '?a=1', '.', 'mailto:a@b.example', 'http://[::1'];
    const methods = [...new Set(routesOf(server).map((route) => route.method)), 'OPTIONS'];
    const wrong: string[] = [];
    for (const requestTarget of targets) {
      for (const method of methods) {
        for (const [scheme, headers] of await schemes(method, '/v1/operations/X1')) {
          const answer = await exchange(server, `${method} ${requestTarget} HTTP/1.1`, headers);
          // Node's own parser refuses some of these before the service sees them (400 too).
          if (answer.status !== 400) wrong.push(`${method} ${requestTarget} with ${scheme}: ${answer.status} ${answer.body.slice(0, 160)}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(errorLines(), []);
  });

  test('any target fast-check makes of URL pieces is answered below 500, with every scheme, and writes no error line', async () => {
    const routes = routesOf(server);
    const piece = fc.constantFrom('/', '//', 'http://', 'HTTPS://', 'x', 'v1', 'operations', 'realms', 'sandbox', '%', '%zz', '%2F', '%00', '#', '?', '&', '=', '@', '[', ']', '[::1]', ':', ':80', '*', '..', '.', ';', '~', 'é', '\u202e');
    const scheme = fc.integer({ min: 0, max: 4 });
    const runs = Number(process.env.FUZZ_RUNS ?? 150);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.array(piece, { minLength: 0, maxLength: 8 }), fc.boolean(), scheme, async (route, pieces, prefixed, schemeIndex) => {
        const requestTarget = `${prefixed ? route.path : ''}${pieces.join('')}` || '*';
        const [, headers] = (await schemes(route.method, route.path))[schemeIndex]!;
        const answer = await exchange(server, `${route.method} ${printable(requestTarget)} HTTP/1.1`, headers);
        assert.ok(answer.status > 0 && answer.status < 500, `${route.method} ${requestTarget}: ${answer.status} ${answer.body.slice(0, 200)}`);
      }),
      { numRuns: runs, ...(process.env.FUZZ_SEED === undefined ? {} : { seed: Number(process.env.FUZZ_SEED) }) },
    );
    assert.deepEqual(errorLines(), []);
  });

  test('an absolute-form target without a path is the root, /', async () => {
    const answer = await exchange(server, 'GET http://attacker.example HTTP/1.1', []);
    const root = await exchange(server, 'GET / HTTP/1.1', []);
    assert.equal(answer.status, root.status);
    assert.equal(answer.body, root.body);
  });
});
