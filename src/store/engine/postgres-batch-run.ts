/**
 * Several named statements of one transaction in one pipeline with one Sync at its end. pg's
 * pipeline mode ends every statement with a Sync, and PostgreSQL answers each Sync with its own
 * ReadyForQuery and a flush of its socket: per statement, a write on the server and a wake-up
 * of the service. Inside a transaction block nothing is gained by them — a failed statement
 * aborts the transaction whatever follows it — so the statements of a transaction's batch
 * (statement-queue.ts) are sent as Bind, Describe, Execute each, and one Sync.
 *
 * PostgreSQL skips everything after a failed statement up to the Sync: that statement answers its
 * error, and each one after it an error of its own saying it did not run (SQLSTATE 25P02, as the
 * server answers a statement sent into a failed transaction). Only statements already parsed on
 * the connection come this way (the driver checks), so no Parse is sent: pg's bookkeeping of
 * parsed statements stays its own.
 */
import { createRequire } from 'node:module';
import { NotRunInBatch } from './not-run-in-batch.js';
import { QueryBase, rowOf, type RowShapes, type FieldDescription, type NamedRunResult, type ResultInternals, type RowShape } from './postgres-named-run.js';

const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as { prepareValue: (value: unknown) => unknown };

export interface BatchStatement {
  name: string;
  values: readonly unknown[];
  resolve: (result: NamedRunResult) => void;
  reject: (error: unknown) => void;
}

/** The parts of pg's Connection a run writes to. */
interface ProtocolWriter {
  stream: { cork?(): void; uncork?(): void };
  bind(config: { portal: string; statement: string; values: unknown[] }): void;
  describe(config: { type: 'P'; name: string }): void;
  execute(config: { portal: string; rows: number }): void;
  sync(): void;
}

const commandTag = /^([A-Za-z]+)(?: (\d+))?(?: (\d+))?/;

export class OneSyncBatchRun extends QueryBase {
  readonly #shapes: RowShapes;
  readonly #statements: BatchStatement[];
  readonly #values: unknown[][];
  /** The statement being answered. */
  #current = 0;
  #shape: RowShape | undefined;
  #rows: unknown[] = [];
  #rowError: unknown;
  #ended = false;

  /** Throws, before anything is sent, when a value cannot be sent (as pg's bind would). */
  constructor(shapes: RowShapes, statements: BatchStatement[]) {
    super({ text: '' });
    this.#shapes = shapes;
    this.#statements = statements;
    this.#values = statements.map((statement) => statement.values.map((value) => prepareValue(value)));
  }

  submit(connection: ProtocolWriter): null {
    connection.stream.cork?.();
    try {
      this.#statements.forEach((statement, index) => {
        connection.bind({ portal: '', statement: statement.name, values: this.#values[index] as unknown[] });
        connection.describe({ type: 'P', name: '' });
        connection.execute({ portal: '', rows: 0 });
      });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const statement = this.#statements[this.#current];
    if (statement === undefined) return;
    this.#shape = this.#shapes.shapeOf(statement.name, message.fields, this.#result());
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    if (this.#rowError !== undefined) return;
    try {
      this.#rows.push(rowOf(this.#shape, this.#result(), message.fields));
    } catch (error) {
      this.#rowError = error;
    }
  }

  handleCommandComplete(message: { text?: string; command?: string }): void {
    const match = commandTag.exec(message.text ?? message.command ?? '');
    this.#complete(match?.[1] ?? null, match?.[3] ?? match?.[2]);
  }

  handleEmptyQuery(): void {
    this.#complete(null, undefined);
  }

  handleError(error: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    const failed = this.#statements[this.#current];
    failed?.reject(error);
    for (const skipped of this.#statements.slice(this.#current + 1)) {
      // The cause travels with it: a batch cut by a lost connection is an outage for each statement.
      skipped.reject(new NotRunInBatch(`not run: an earlier statement of its batch failed (${(error as Error).message})`, { cause: error }));
    }
    this.#finish(error);
  }

  handleReadyForQuery(): void {
    if (this.#ended) return;
    this.#ended = true;
    // Every statement answered before the Sync; one that did not is a broken exchange.
    for (const unanswered of this.#statements.slice(this.#current)) unanswered.reject(new Error('PostgreSQL ended the batch without answering this statement'));
    this.#finish(null);
  }

  /** pg's own end of a query: its callback (pg wraps it to clear a `query_timeout` timer, which would otherwise end the connection). */
  #finish(error: unknown): void {
    const { callback } = this as unknown as { callback?: (error: unknown, result: unknown) => void };
    callback?.(error, undefined);
  }

  handlePortalSuspended(): void {
    this.handleError(new Error('a batched statement was suspended: batches never page rows'));
  }

  #complete(command: string | null, rowCount: string | undefined): void {
    const statement = this.#statements[this.#current];
    this.#current += 1;
    const rows = this.#rows;
    const rowError = this.#rowError;
    this.#rows = [];
    this.#rowError = undefined;
    this.#shape = undefined;
    if (statement === undefined) return;
    if (rowError !== undefined) statement.reject(rowError);
    else statement.resolve({ command, rowCount: rowCount === undefined ? null : Number(rowCount), rows });
  }

  #result(): ResultInternals {
    return (this as unknown as { _result: ResultInternals })._result;
  }
}
