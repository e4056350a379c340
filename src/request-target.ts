/**
 * The request target (RFC 9112 §3.2) as the rest of the service reads it: a path and a query.
 *
 * A server must accept the absolute form (`GET http://host/v1/operations/{ref} HTTP/1.1`), which a
 * client sends through a forward proxy. Fastify's router finds the route of such a target, but
 * `request.url` kept the whole URL, and every reader of the path (the error record's `path`, the
 * request log, the audit record, the DPoP proof's expected `htu`) saw `http://host/v1/...`: the
 * expected `htu` became the public URL followed by another URL, and its refusal's message failed
 * to parse it (a 500; docs/security.md). So the target is rewritten to its origin form before
 * routing, once, and every reader sees the path. The authority of an absolute target is not
 * trusted for anything: the service's own public URL names it (docs/auth.md, DPoP at the API).
 *
 * Any other form (the asterisk form `*`, an authority, text that is not a URL) names no resource of
 * this service: it is refused with 400 by the first hook, in the shape of the path's family of
 * answers (src/api/framework-errors.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { frameworkRefusal } from './api/framework-errors.js';

/**
 * `http://` or `https://` (any case) and an authority: a host name or an IP literal and an optional
 * port (RFC 3986 §3.2), ending where the path or the query begins. Userinfo (`user@`) is refused,
 * as RFC 9110 §4.2.4 tells a recipient to treat it as an error.
 */
const absoluteForm = /^https?:\/\/(?:[A-Za-z0-9._~!$&'()*+,;=%-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]*)?(?=[/?]|$)/i;

/** Fastify's `rewriteUrl`: the origin form of an absolute target; any other target unchanged. */
export function originFormOf(request: IncomingMessage): string {
  const target = request.url ?? '';
  // The common case, a path, costs one comparison.
  if (target.charCodeAt(0) === 47 /* '/' */) return target;
  const authority = absoluteForm.exec(target);
  if (authority === null) return target;
  const rest = target.slice(authority[0].length);
  // `http://host?x` and `http://host` mean the path `/`.
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** Whether a target, after `originFormOf`, is a path this service can answer. */
export function isOriginForm(target: string): boolean {
  return target.charCodeAt(0) === 47 && !target.includes('#');
}

export const unroutableTargetMessage = 'The request target must be a path (/v1/...) or an http(s) URL naming one';

/**
 * Refuses, first of all hooks, a request whose target is no path: the asterisk form, an
 * authority, a fragment, anything else. Call on the root instance right after the route facts.
 */
export function refuseUnroutableTargets(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    if (isOriginForm(request.url)) return done();
    // Answered here; the hook chain stops (no `done`), so no guard reads the target.
    frameworkRefusal(unroutableTargetMessage, request, reply);
  });
}
