// The hello-world baseline: Fastify with its defaults (no logger), one route, its own process.
import Fastify from 'fastify';

const app = Fastify({ logger: false });
app.get('/', async () => ({ hello: 'world' }));
await app.listen({ port: Number(process.argv[2]), host: '127.0.0.1' });
console.log('hello-world listening');
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));
