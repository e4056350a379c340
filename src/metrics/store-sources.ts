/** The gauges read from the store at scrape time: unchained audit records and the pool's use. */
import { countUnchained } from '../store/audit.js';
import type { Store } from '../store/connect.js';
import type { Metrics } from './registry.js';

export function watchStore(metrics: Metrics, store: Store): void {
  // One indexed count per scrape (the unique index on chain_seq serves `chain_seq is null`).
  metrics.setAuditUnchainedSource(() => countUnchained(store.db));
  metrics.setPoolStatsSource(() => store.poolStats());
}
