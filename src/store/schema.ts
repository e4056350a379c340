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

export interface DirectoryUserTable {
  login: string;
  status: string;
}

export interface WorkstationTable {
  id: string;
  status: string;
}

export interface Database extends CoreDatabase {
  realms: RealmTable;
  clients: ClientTable;
  signing_keys: SigningKeyTable;
  settings: SettingTable;
  directory_users: DirectoryUserTable;
  workstations: WorkstationTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_events: WebhookEventTable;
  webhook_deliveries: WebhookDeliveryTable;
  operator_login_tokens: OperatorLoginTokenTable;
  operator_sessions: OperatorSessionTable;
}

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

export interface CustomerTable {
  customer_reference: string;
  name: string | null;
  status: string;
}

export interface AccountTable {
  account_number: string;
  customer_reference: string | null;
  currency: string;
  status: string;
  kind: string;
  /** bigint in the database: read as string (PostgreSQL) or number/bigint (SQLite); see reference-core/storage/ledger.ts. */
  balance_minor: bigint | string | number;
  created_at: string;
}

export interface MovementTable {
  id: string;
  reference: string;
  kind: string;
  description: string | null;
  business_date: string;
  created_at: string;
}

export interface PostingTable {
  movement_id: string;
  line: number;
  account_number: string;
  amount_minor: bigint | string | number;
  currency: string;
}

export interface TermDepositProductTable {
  product_code: string;
  component_code: string;
  active: number;
  currencies: string;
  min_amount: string;
  max_amount: string;
  min_days: number;
  max_days: number;
  day_count: string;
}

export interface TermDepositTable {
  contract_number: string;
  customer_reference: string;
  product_code: string;
  component_code: string;
  principal_minor: bigint | string | number;
  currency: string;
  rate_percent: string;
  day_count: string;
  value_date: string;
  maturity_date: string;
  number_of_days: number;
  source_account: string;
  interest_account: string;
  description: string | null;
  operation_reference: string;
  status: string;
  created_at: string;
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
}

export interface CoreOperationTable {
  reference: string;
  kind: string;
  status: string;
  refusal_name: string | null;
  refusal_message: string | null;
  recorded_at: string;
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

export interface LoanFacilityTable {
  loan_id: string;
  customer_reference: string;
  loan_type: string;
  parameter_type: string;
  currency: string;
  approved_limit_minor: bigint | string | number;
  executed_total_minor: bigint | string | number;
  status: string;
  final_maturity_date: string;
  fixed_fee_minor: bigint | string | number;
  commission_rate: string;
  minimum_commission_minor: bigint | string | number;
  tax_rate: string;
}

export interface LoanInstallmentTable {
  loan_id: string;
  sequence: number;
  due_date: string;
  amount_minor: bigint | string | number;
  paid_minor: bigint | string | number;
  /** Pending | Overdue | Paid (migration 0006). */
  status: string;
}

export interface LoanExecutionTable {
  operation_id: string;
  execution_reference: string;
  loan_id: string;
  sequence: number;
  amount_minor: bigint | string | number;
  commission_minor: bigint | string | number;
  fee_minor: bigint | string | number;
  tax_minor: bigint | string | number;
  payment_account: string;
  expense_account: string;
  facility_status: string;
  executed_at: string;
}

/** One row per business day whose end of day ran (migration 0006). */
export interface CoreBusinessDayTable {
  business_date: string;
  closed_at: string;
  matured_deposits: number;
  overdue_installments: number;
}

/** The core's outbox (migration 0006): events written with the change that made them. */
export interface CoreEventTable {
  sequence: Generated<number | string | bigint>;
  id: string;
  type: string;
  business_date: string;
  operation_reference: string | null;
  /** JSON. */
  data: string;
  created_at: string;
}

/** The reference core's named values (its migration 0001): business date, calendar. */
export interface CoreSettingTable {
  name: string;
  value: string;
}

export interface CoreDatabase {
  core_settings: CoreSettingTable;
  core_business_days: CoreBusinessDayTable;
  core_events: CoreEventTable;
  loan_facilities: LoanFacilityTable;
  loan_installments: LoanInstallmentTable;
  loan_executions: LoanExecutionTable;
  customers: CustomerTable;
  accounts: AccountTable;
  movements: MovementTable;
  postings: PostingTable;
  term_deposit_products: TermDepositProductTable;
  term_deposits: TermDepositTable;
  core_operations: CoreOperationTable;
  operations: OperationTable;
  audit_records: AuditRecordTable;
}

/** Signed events (CONTRACT §12, migration 0007): see src/store/webhooks.ts. */
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
