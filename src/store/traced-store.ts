/**
 * The store with a span around each transaction (and so each unit of work, which is one): one
 * seam where the Store object is assembled, rather than inside the dialects' drivers. A span
 * says which database and how long the transaction took from the caller's side — waiting for a
 * connection of the pool or for its SQLite commit group included — and whether it committed.
 * It carries no SQL and no value: statements quote account numbers and amounts.
 */
import { context, trace, type Tracer } from '@opentelemetry/api';
import { attribute } from '../tracing/attributes.js';
import { inClientSpan } from '../tracing/client-span.js';
import type { Store } from './connect.js';

/** The database's name in the semantic conventions' `db.system.name`. */
const systemNames = { sqlite: 'sqlite', postgres: 'postgresql' } as const;

/**
 * The same store, its transactions traced. Only a transaction inside a recorded trace gets a
 * span (a request's, or a core call's on the remote core): the background loops (the reconciler,
 * the pending worker, the webhook relay, the audit chain) commit every few hundred milliseconds,
 * and a trace of one transaction each would bury the requests worth following.
 */
export function tracedStore(store: Store, tracer: Tracer): Store {
  const system = systemNames[store.dialect];
  const attributes = { [attribute.dbSystemName]: system, [attribute.dbSystem]: system };
  const transaction: Store['transaction'] = (work, options) => {
    if (trace.getSpan(context.active())?.isRecording() !== true) return store.transaction(work, options);
    return inClientSpan(tracer, `transaction ${system}`, attributes, () => store.transaction(work, options));
  };
  // Every other member as it is (a spread: a member added to Store later is kept, not dropped).
  return { ...store, transaction };
}
