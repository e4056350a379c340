/**
 * An OTLP/HTTP trace receiver in the test's process: POST /v1/traces with a JSON body
 * (OTEL_EXPORTER_OTLP_PROTOCOL=http/json), answered as a collector does. It keeps every body as
 * received, to search for what must never be exported, and the spans decoded from them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** SpanKind in OTLP: 1 internal, 2 server, 3 client. */
export const spanKind = { internal: 1, server: 2, client: 3 } as const;

export interface ReceivedSpan {
  /** The exporting process's service.name. */
  service: string;
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  /** The span context's W3C trace state as exported (`traceState`), empty when it has none. */
  traceState: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  status: { code?: number };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}

interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}

interface OtlpExport {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttribute[] };
    scopeSpans?: Array<{
      spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; traceState?: string; name: string; kind: number; attributes?: OtlpAttribute[]; status?: { code?: number } }>;
    }>;
  }>;
}

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  return value.boolValue ?? '';
}

function attributesOf(attributes: OtlpAttribute[] | undefined): Record<string, string | number | boolean> {
  return Object.fromEntries((attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]));
}

export class OtlpReceiver {
  /** Every request body, as text. */
  readonly bodies: string[] = [];
  /** Every request's path and Content-Type. */
  readonly requests: Array<{ path: string; contentType: string }> = [];
  readonly spans: ReceivedSpan[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  /** Listens on 127.0.0.1 (on `port`, or any free one); rejects when the port is taken. */
  static async start(port = 0): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        receiver?.receive(request.method ?? '', request.url ?? '', String(request.headers['content-type'] ?? ''), Buffer.concat(chunks).toString('utf8'));
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return receiver;
  }

  private receive(method: string, path: string, contentType: string, body: string): void {
    this.bodies.push(body);
    this.requests.push({ path, contentType });
    // Protobuf bodies are kept as they came, not decoded.
    if (method !== 'POST' || path !== '/v1/traces' || !contentType.startsWith('application/json')) return;
    const parsed = JSON.parse(body) as OtlpExport;
    for (const resourceSpans of parsed.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name'] ?? '');
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            traceState: span.traceState ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            status: span.status ?? {},
          });
        }
      }
    }
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
