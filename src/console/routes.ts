/**
 * The console (issue 11): `GET /console` serves one page and its ES modules, all from this
 * process (no CDN, no build step); the page reads the operator API only. `GET /console/login`
 * turns a one-time login token into a session cookie. Every file served is named here: the
 * console's own (src/console/static) and exactly the vendored library files of node_modules.
 */
import type { Clock } from '../core/clock.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { coregateIconSvg } from '../docs-page/logo.js';
import { sessionCookieName } from '../operator/auth.js';
import type { Store } from '../store/connect.js';
import { consumeLoginToken, sessionLifeMs } from '../store/operator-sessions.js';

export interface ConsoleRoutesOptions {
  store: Store;
  /** The service's public base URL: an https one makes the cookie Secure behind a TLS proxy. */
  publicUrl: () => string;
  /** The instance's clock: whether a login token has expired, and the session's. */
  clock: Clock;
}

/**
 * Scripts and styles from this origin only, nothing inline; the page talks to this origin only
 * and may not be framed. uPlot and Preact set styles through the CSSOM (element.style), which
 * style-src does not restrict, so no 'unsafe-inline' is needed anywhere.
 */
export const consoleCsp = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The console's own files, by URL path under /console/. */
const ownFiles: Record<string, string> = {
  'app.js': 'app.js',
  'api.js': 'api.js',
  'format.js': 'format.js',
  'sections.js': 'sections.js',
  'requests.js': 'requests.js',
  'html.js': 'html.js',
  'poll.js': 'poll.js',
  'charts.js': 'charts.js',
  'token-decoder.js': 'token-decoder.js',
  'console.css': 'console.css',
};

/** Exactly these library files, by URL path under /console/vendor/. */
const vendorFiles: Record<string, { packageName: string; file: string; rewrite?: (source: string) => string }> = {
  'preact.js': { packageName: 'preact', file: 'dist/preact.module.js' },
  // The hooks import "preact" by its bare name, which a browser cannot resolve without an import
  // map (an inline script the CSP forbids): it is pointed at the file served beside it.
  'hooks.js': { packageName: 'preact', file: 'hooks/dist/hooks.module.js', rewrite: (source) => source.replace(/from\s*"preact"/g, 'from"./preact.js"') },
  'htm.js': { packageName: 'htm', file: 'dist/htm.module.js' },
  'uplot.js': { packageName: 'uplot', file: 'dist/uPlot.esm.js' },
  'uplot.css': { packageName: 'uplot', file: 'dist/uPlot.min.css' },
};

/** src/console/static, whether this module runs from src (tsx) or from dist/src (the build). */
function staticDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'static'), join(here, '..', '..', '..', 'src', 'console', 'static')];
  const found = candidates.find((candidate) => existsSync(join(candidate, 'index.html')));
  if (!found) throw new Error(`the console's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * A package's directory: its entry point resolved, then up to its package.json (the packages'
 * "exports" do not name the ESM files served here, so they cannot be resolved by subpath).
 */
function packageRoot(require: NodeJS.Require, packageName: string): string {
  let directory = dirname(require.resolve(packageName));
  for (let depth = 0; depth < 5; depth += 1) {
    const manifest = join(directory, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === packageName) return directory;
    directory = dirname(directory);
  }
  throw new Error(`the console's library ${packageName} is not installed`);
}

function contentTypeOf(name: string): string {
  if (name.endsWith('.js')) return 'text/javascript; charset=utf-8';
  if (name.endsWith('.css')) return 'text/css; charset=utf-8';
  return 'text/html; charset=utf-8';
}

interface Asset {
  body: string;
  contentType: string;
}

/**
 * The console's icon: the docs page's mark, so that the product has one. Linked from the page as
 * an SVG, and answered at /favicon.ico too, which a browser asks for by itself from a page that
 * links none (the login refusal, the home page): without it every such load logged a 404.
 */
const icon: Asset = { body: coregateIconSvg, contentType: 'image/svg+xml' };

/** Reads every file once at start: a missing one fails the start, not a page load. */
function loadAssets(): { index: Asset; own: Map<string, Asset>; vendor: Map<string, Asset> } {
  const directory = staticDirectory();
  const read = (name: string): Asset => ({ body: readFileSync(join(directory, name), 'utf8'), contentType: contentTypeOf(name) });
  const own = new Map(Object.entries(ownFiles).map(([path, file]) => [path, read(file)]));
  const require = createRequire(import.meta.url);
  const vendor = new Map(
    Object.entries(vendorFiles).map(([path, file]) => {
      const source = readFileSync(join(packageRoot(require, file.packageName), file.file), 'utf8');
      return [path, { body: file.rewrite ? file.rewrite(source) : source, contentType: contentTypeOf(path) }];
    }),
  );
  return { index: read('index.html'), own, vendor };
}

function securityHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', consoleCsp)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store');
}

function isHttps(request: FastifyRequest, publicUrl: string): boolean {
  return request.protocol === 'https' || publicUrl.startsWith('https:');
}

/** The page a refused login link shows: what happened and what to do. */
function loginRefusedPage(): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>coregate console: login link not valid</title>
<link rel="icon" type="image/svg+xml" href="/console/favicon.svg">
<link rel="stylesheet" href="/console/console.css"></head>
<body><main class="notice"><h1>This login link is not valid</h1>
<p>A console login link works once, for 10 minutes. This one was already used, has expired, or was never issued.</p>
<p>Run <code>coregate console</code> (or restart <code>npm start</code> in sandbox mode) for a new one-time URL.</p>
</main></body></html>
`;
}

export async function consoleRoutes(app: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const assets = loadAssets();
  const send = (reply: FastifyReply, asset: Asset) => securityHeaders(reply).type(asset.contentType).send(asset.body);

  app.get('/console', { schema: { hide: true } }, async (_request, reply) => send(reply, assets.index));
  app.get('/console/', { schema: { hide: true } }, async (_request, reply) => reply.redirect('/console', 308));
  app.get('/console/favicon.svg', { schema: { hide: true } }, async (_request, reply) => send(reply, icon));
  app.get('/favicon.ico', { schema: { hide: true } }, async (_request, reply) => send(reply, icon));
  for (const [path, asset] of assets.own) app.get(`/console/${path}`, { schema: { hide: true } }, async (_request, reply) => send(reply, asset));
  for (const [path, asset] of assets.vendor) app.get(`/console/vendor/${path}`, { schema: { hide: true } }, async (_request, reply) => send(reply, asset));

  app.get<{ Querystring: { token?: string } }>(
    '/console/login',
    { schema: { hide: true, querystring: { type: 'object', properties: { token: { type: 'string', maxLength: 256 } } } } },
    async (request, reply) => {
      const token = request.query.token;
      const session = token === undefined ? undefined : await consumeLoginToken(options.store, token, options.clock.now());
      if (!session) {
        request.log.info('console login refused: unknown, used or expired login token');
        return securityHeaders(reply).code(401).type('text/html; charset=utf-8').send(loginRefusedPage());
      }
      const flags = ['Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${Math.floor(sessionLifeMs / 1000)}`];
      if (isHttps(request, options.publicUrl())) flags.push('Secure');
      request.log.info({ issuedBy: session.issuedBy }, 'console session opened');
      return securityHeaders(reply)
        .header('set-cookie', `${sessionCookieName}=${session.value}; ${flags.join('; ')}`)
        .redirect('/console', 303);
    },
  );
}
