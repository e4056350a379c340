/**
 * A run of one of coregate's named statements (prepared-query.ts) on pg, with the statement's
 * row shape worked out once instead of on every run. For every result pg builds a parser per
 * column and an empty row to copy, then fills each row field by field; with the query options
 * copied for every call, that was a tenth of a PostgreSQL retrieve's CPU (measured: `addFields`
 * 3.8 %, `cloneQueryConfig` 2.1 % of the samples). Here a statement's shape — its columns'
 * names, types and parsers — is kept by statement name and turned into a compiled row maker,
 * used while the server describes the same columns (checked on every run: a migration that
 * changed them gets a new shape).
 *
 * It is pg's own Query underneath (pipeline mode accepts only that): the protocol, errors and
 * the end of the run are pg's; only the handling of the row description and of rows differs.
 */
import pg from 'pg';
import { compileRowLiteral } from './row-literal.js';

export interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

type RowMaker = (values: ReadonlyArray<string | null>, parsers: ReadonlyArray<(text: string) => unknown>) => Record<string, unknown>;

export interface RowShape {
  fields: FieldDescription[];
  parsers: Array<(text: string) => unknown>;
  make: RowMaker;
}

/** pg's Result internals used here (untyped in @types/pg). */
export interface ResultInternals {
  fields: FieldDescription[];
  rows: unknown[];
  command: string | null;
  rowCount: number | null;
  _parsers: Array<(text: string) => unknown>;
  addFields(fields: FieldDescription[]): void;
  parseRow(values: Array<string | null>): unknown;
}

export interface NamedRunResult {
  command: string | null;
  rowCount: number | null;
  rows: unknown[];
}


/** pg's Query, the base of every run here: pg's pipeline mode accepts no other submittable. */
export const QueryBase = pg.Query as unknown as new (config: { name?: string; text: string; values?: unknown[]; callback?: (error: Error | null, result: NamedRunResult) => void }) => object;

export class NamedStatementRun extends QueryBase {
  readonly #shapes: RowShapes;
  #shape: RowShape | undefined;

  constructor(shapes: RowShapes, name: string, text: string, values: unknown[], callback: (error: Error | null, result: NamedRunResult) => void) {
    super({ name, text, values, callback });
    this.#shapes = shapes;
  }

  handleRowDescription(message: { fields: FieldDescription[] }): void {
    const self = this as unknown as { name: string; _result: ResultInternals; _accumulateRows: boolean };
    this.#shape = this.#shapes.shapeOf(self.name, message.fields, self._result);
    // A prepared statement is one statement: one row description, and the rows are collected.
    self._accumulateRows = true;
  }

  handleDataRow(message: { fields: Array<string | null> }): void {
    const self = this as unknown as { _result: ResultInternals; _canceledDueToError: unknown };
    if (self._canceledDueToError) return;
    try {
      self._result.rows.push(rowOf(this.#shape, self._result, message.fields));
    } catch (error) {
      self._canceledDueToError = error;
    }
  }
}

/**
 * The row shapes of one database's named statements (postgres-driver.ts owns one per dialect,
 * beside the names): a name means the same text on every connection of that database only.
 * Bounded, since only the prepared queries' few dozen texts are named.
 */
export class RowShapes {
  readonly #byName = new Map<string, RowShape>();

  /**
   * The shape of statement `name`'s rows as the server describes them now: the one kept when the
   * columns are the same, else a new one (pg's own resolution of the parsers, its type overrides
   * included, on `result`). Undefined for columns a compiled maker cannot take (binary, or a name
   * an object literal would treat specially): then `result` parses them itself.
   */
  shapeOf(name: string, fields: FieldDescription[], result: ResultInternals): RowShape | undefined {
    result.fields = fields;
    const known = this.#byName.get(name);
    if (known !== undefined && sameFields(known.fields, fields)) return known;
    result.addFields(fields);
    if (!fields.every((field) => (field.format ?? 'text') === 'text')) return undefined;
    const make = compileRowLiteral<RowMaker>(
      fields.map((field) => field.name),
      ['v', 'p'],
      (index) => `v[${index}] === null ? null : p[${index}](v[${index}])`,
    );
    if (make === undefined) return undefined;
    const shape = { fields, parsers: result._parsers, make };
    this.#byName.set(name, shape);
    return shape;
  }
}

/** A row made by its shape, or by pg's Result when there is none. */
export function rowOf(shape: RowShape | undefined, result: ResultInternals, values: Array<string | null>): unknown {
  return shape === undefined ? result.parseRow(values) : shape.make(values, shape.parsers);
}

function sameFields(known: readonly FieldDescription[], described: readonly FieldDescription[]): boolean {
  if (known.length !== described.length) return false;
  for (let i = 0; i < known.length; i++) {
    const a = known[i] as FieldDescription;
    const b = described[i] as FieldDescription;
    if (a.name !== b.name || a.dataTypeID !== b.dataTypeID || a.format !== b.format) return false;
  }
  return true;
}
