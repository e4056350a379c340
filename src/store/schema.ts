/**
 * Table types of the store: one interface per table, shared by both dialects.
 * Timestamps are ISO 8601 strings in UTC; instants compared in SQL are epoch seconds.
 */
import type { Generated } from 'kysely';
export interface RealmTable {
  name: string;
  audience: string;
  lifespan_seconds: number;
  signing_alg: string;
  /** Epoch seconds; tokens issued before it are refused. 0 when never set. */
  not_before: number;
  /** Incremented on every key change so that running instances reload their key cache. */
  key_generation: number;
  created_at: string;
  /** `fapi2` (docs/auth.md, "Client metadata and the fapi2 profile") or null. */
  profile: string | null;
  /** 1: DPoP proofs at the token endpoint need a server nonce. */
  dpop_nonce: number;
}

export interface ClientTable {
  realm: string;
  client_id: string;
  /** Stable id of the client's service account: the token's `sub`. */
  service_account_id: string;
  /** Hex HMAC-SHA256 of the secret under the store's secret-hash key. */
  secret_hash: string;
  enabled: number;
  /** JSON array of grant type names. */
  grants: string;
  /** JSON array of scope names. */
  scopes: string;
  technical_user: string | null;
  default_workstation: string | null;
  created_at: string;
  updated_at: string;
  /** client_secret_basic (a secret, sent either way), private_key_jwt or tls_client_auth (docs/auth.md, "Client metadata and the fapi2 profile"). */
  auth_method: string;
  /** JSON `{"keys": [...]}`: the client's public keys (private_key_jwt). */
  jwks: string | null;
  /** The subject DN its TLS client certificate must have (tls_client_auth). */
  tls_subject_dn: string | null;
  /** 1: its tokens are DPoP-bound (a proof at the token endpoint required). */
  dpop_bound: number;
  /** 1: its tokens are bound to its TLS client certificate. */
  certificate_bound: number;
  /**
   * Epoch seconds (migration 0011); the client's tokens issued before it are refused. Raised on
   * disable, secret rotation, a key change and `clients revoke-tokens`. 0 when never set.
   */
  tokens_not_before: Generated<number>;
}

export interface SigningKeyTable {
  kid: string;
  realm: string;
  alg: string;
  public_jwk: string;
  /** The private JWK as JSON, or `enc:v1:...` when encrypted with the master key. */
  private_jwk: string;
  created_at: string;
  /** Epoch seconds at which the key stopped signing; null while active. */
  retired_at: number | null;
}

export interface SettingTable {
  name: string;
  value: string;
}

/**
 * The API's tables (its migrations, src/store/migrations).
 */
export interface ApiTables {
  operations: OperationTable;
  audit_records: AuditRecordTable;
  realms: RealmTable;
  clients: ClientTable;
  signing_keys: SigningKeyTable;
  settings: SettingTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_events: WebhookEventTable;
  webhook_deliveries: WebhookDeliveryTable;
  operator_login_tokens: OperatorLoginTokenTable;
  operator_sessions: OperatorSessionTable;
  /** PostgreSQL only: SQLite keeps its uses in `replay_uses_0` and `replay_uses_1` since migration 0013. */
  replay_records: ReplayRecordTable;
  replay_horizon: ReplayHorizonTable;
  /** SQLite only (migration 0013): the replay record's two generations. */
  replay_uses_0: ReplayUsesTable;
  replay_uses_1: ReplayUsesTable;
  request_log: RequestLogTable;
}

/** Client assertions' and DPoP proofs' jtis already used (migration 0009; unlogged on PostgreSQL since 0012). */
export interface ReplayRecordTable {
  key: string;
  expires_epoch_ms: bigint | string | number;
}

/** From when the replay record holds every use (migration 0012, src/auth/replay-record.ts): one row, id 1. */
export interface ReplayHorizonTable {
  id: number;
  since_epoch_ms: bigint | string | number;
  boot_id: string | null;
  /** SQLite only (migration 0013): the generation uses go into, 0 or 1. */
  generation?: number;
  /** SQLite only (migration 0013): the latest expiry recorded in each generation. */
  expires_max_0?: bigint | string | number;
  expires_max_1?: bigint | string | number;
}

/** SQLite's replay record, one of two generations (migration 0013): a use's SHA-256 key (32 bytes) and until when it is kept. */
export interface ReplayUsesTable {
  key: Uint8Array;
  expires_epoch_ms: bigint | string | number;
}

/**
 * The store's database as the API sees it: the API's tables only. With the embedded core the
 * reference core's tables share the database, but their types are the core's
 * (src/reference-core/storage/core-schema.ts) and only the core sees them, narrowing the shared
 * handle (core-db.ts): an API query on a core table does not compile. With a remote core the
 * core's tables are absent from the database (its migrations never run there).
 * test/architecture.test.ts keeps it so.
 */
export interface Database extends ApiTables {}

/** One-time console login tokens (migration 0008), kept as hashes. */
export interface OperatorLoginTokenTable {
  token_hash: string;
  created_at: string;
  expires_epoch_ms: bigint | string | number;
  used_epoch_ms: bigint | string | number | null;
  issued_by: string;
}

/** Console sessions (migration 0008), kept as hashes. */
export interface OperatorSessionTable {
  session_hash: string;
  created_at: string;
  expires_epoch_ms: bigint | string | number;
  issued_by: string;
}

export interface OperationTable {
  reference: string;
  client_key: string;
  correlation_id: string;
  correlation_supplied: number;
  operation: string;
  scope: string;
  path: string;
  request_hash: string;
  request: string | null;
  status: string;
  http_status: number | null;
  result: string | null;
  error: string | null;
  actor: string;
  created_at: string;
  created_epoch_ms: bigint | string | number;
  updated_at: string;
  /** Reconciliation attempts so far. */
  attempts: number;
  /** The reconciler leaves the operation alone before this instant. */
  next_attempt_epoch_ms: bigint | string | number;
  /** The last change: an in-flight operation older than its lease is the reconciler's. */
  updated_epoch_ms: bigint | string | number;
  /** 1 when answered 202: owed an execution. */
  accepted: number;
  /** The sandbox scenario the request forced (JSON), or null. */
  scenario: string | null;
}

export interface RequestLogTable {
  id: string;
  client_key: string;
  recorded_at: string;
  recorded_epoch_ms: bigint | string | number;
  method: string;
  path: string;
  status: number;
  correlation_id: string | null;
  duration_ms: number;
  operation_reference: string | null;
  scenario: string | null;
  request_headers: string;
  response_headers: string;
  request_body: string | null;
  response_body: string | null;
}

export interface AuditRecordTable {
  id: string;
  recorded_at: string;
  client_id: string;
  backbone_user: string | null;
  workstation: string | null;
  operation: string;
  correlation_id: string | null;
  reference: string | null;
  http_status: number;
  outcome: string;
  duration_ms: number;
  details: string;
  chain_seq: bigint | string | number | null;
  prev_hash: string | null;
  hash: string | null;
}

/** Signed events (docs/webhooks.md, "Store"; migration 0007): see src/store/webhooks.ts. */
export interface WebhookEndpointTable {
  id: string;
  realm: string;
  client_id: string;
  url: string;
  /** `whsec_...`, sealed by the vault (`enc:v1:...`) when a master key is set. */
  secret: string;
  enabled: number;
  /** JSON array of event types; empty: every type. */
  event_types: string;
  created_at: string;
}

export interface WebhookEventTable {
  id: string;
  type: string;
  realm: string;
  client_id: string;
  reference: string | null;
  payload: string;
  created_at: string;
  created_epoch_ms: bigint | string | number;
  dispatched: number;
}

export interface WebhookDeliveryTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: string;
  attempts: number;
  next_attempt_epoch_ms: bigint | string | number;
  lease_owner: string | null;
  lease_until_epoch_ms: bigint | string | number;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: string | null;
  created_at: string;
  created_epoch_ms: bigint | string | number;
  updated_at: string;
}
