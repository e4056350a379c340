/**
 * `GET /`: where a person or a script starts (issue 12). A browser gets a page of links, anything
 * else a JSON index: the API docs, the OpenAPI document, the console (when served), health.
 */
import type { FastifyInstance } from 'fastify';

export interface HomeOptions {
  version: string;
  /** Whether /console is served here (the operator API is on). */
  console: boolean;
}

export async function homeRoute(app: FastifyInstance, options: HomeOptions): Promise<void> {
  const links: Record<string, string> = {
    docs: '/docs',
    openapi: '/openapi.json',
    postman: '/collections/postman.json',
    ...(options.console ? { console: '/console' } : {}),
    health: '/health/ready',
    discovery: '/realms/{realm}/.well-known/openid-configuration',
  };
  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    if (!/text\/html/.test(request.headers.accept ?? '')) return { service: 'coregate', version: options.version, links };
    const items = [
      ['/docs', 'API docs (try the business API in the browser)'],
      ['/openapi.json', 'OpenAPI 3.1 document'],
      ['/collections/postman.json', 'Postman collection (import it, or run it with newman)'],
      ...(options.console ? [['/console', 'Console (log in with the URL `coregate console` prints)']] : []),
      ['/health/ready', 'Readiness'],
    ];
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(
        `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>coregate</title>` +
          `<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}</style></head>` +
          `<body><h1>coregate ${options.version}</h1><ul>${items.map(([href, text]) => `<li><a href="${href}">${href}</a>: ${text}</li>`).join('')}</ul></body></html>`,
      );
  });
}
