// A local OTLP/HTTP sink for measuring tracing's cost: accepts POST /v1/traces (protobuf or JSON),
// answers 200 as a collector does, and keeps nothing. Run beside bench/quick.ts:
//   node bench/otlp-sink.mjs 4318 &
//   OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 node --import tsx bench/quick.ts retrieve 401 deposit
import { createServer } from 'node:http';

let exports = 0;
let bytes = 0;
const server = createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => {
    exports += 1;
    // An empty message in either encoding: a full success.
    const json = String(request.headers['content-type'] ?? '').startsWith('application/json');
    response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : '');
  });
});
server.listen(Number(process.argv[2] ?? '4318'), '127.0.0.1', () => console.log('otlp sink listening'));
process.on('SIGTERM', () => {
  console.log(`otlp sink: ${exports} exports, ${bytes} bytes`);
  server.close(() => process.exit(0));
});
