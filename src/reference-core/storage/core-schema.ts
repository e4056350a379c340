/**
 * The reference core's tables as Kysely sees them: one interface per table, made by the core's own
 * migrations (./migrations). Amounts are bigint in the database, read as string (PostgreSQL) or
 * number/bigint (SQLite); timestamps are ISO 8601 strings in UTC.
 */
import type { Generated } from 'kysely';

export interface DirectoryUserTable {
  login: string;
  status: string;
}

export interface WorkstationTable {
  id: string;
  status: string;
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

export interface CoreOperationTable {
  reference: string;
  kind: string;
  status: string;
  refusal_name: string | null;
  refusal_message: string | null;
  recorded_at: string;
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
  /** Pending | Overdue | Paid (the core's migration 0001; made by the API's 0006 before the split). */
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

/** One row per business day whose end of day ran (the core's migration 0001; made by the API's 0006 before the split). */
export interface CoreBusinessDayTable {
  business_date: string;
  closed_at: string;
  matured_deposits: number;
  overdue_installments: number;
}

/** The core's outbox (the core's migration 0001; made by the API's 0006 before the split): events written with the change that made them. */
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

export interface CoreTables {
  directory_users: DirectoryUserTable;
  workstations: WorkstationTable;
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
}
