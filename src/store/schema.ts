/**
 * Table types of the store: one interface per table, shared by both dialects.
 * Timestamps are ISO 8601 strings in UTC; instants compared in SQL are epoch seconds.
 */
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

export interface Database {
  realms: RealmTable;
  clients: ClientTable;
  signing_keys: SigningKeyTable;
  settings: SettingTable;
  directory_users: DirectoryUserTable;
  workstations: WorkstationTable;
}
