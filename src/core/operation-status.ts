/**
 * Where a business operation stands (docs/architecture.md, "An operation's path"): accepted and
 * waiting (Pending), sent to the core (InFlight), sent without a definitive answer (Unknown), or
 * final (Executed, Rejected). The operation record keeps it (src/store/operations.ts) and the state
 * table says which moves between them are allowed (src/operations/operation-states.ts).
 */
export type OperationStatus = 'Pending' | 'InFlight' | 'Unknown' | 'Executed' | 'Rejected';
