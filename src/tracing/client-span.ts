/**
 * A client span around one call this process makes to another system: a store transaction
 * (src/store/traced-store.ts) or a remote core call (src/core-http/http-core-adapter.ts). The span
 * is active while the call runs, so that what the call starts is its child, and it ends however
 * the call ends. A failure records the error's class only (`CoreTimeout`, `DatabaseError`): a
 * message may quote the row a database refused or the answer a core sent.
 */
import { SpanKind, SpanStatusCode, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { attribute } from './attributes.js';

/** Runs `call` inside a new active client span named `name`; answers or throws as `call` does. */
export function inClientSpan<T>(tracer: Tracer, name: string, attributes: Attributes, call: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    try {
      return await call(span);
    } catch (error) {
      span.setAttribute(attribute.errorType, error instanceof Error ? error.name : 'unknown');
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}
