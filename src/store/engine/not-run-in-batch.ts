/**
 * A statement the server skipped because one before it in the batch failed (postgres-batch-run.ts).
 * In a module of its own, without pg: the statement queue tells it apart on either dialect, and a
 * process on SQLite never loads pg (open-database.ts).
 */
export class NotRunInBatch extends Error {
  override name = 'NotRunInBatch';
  readonly code = '25P02';
}
