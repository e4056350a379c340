/**
 * Queries built and compiled once, then run with new values. Kysely builds an operation tree and
 * compiles it to SQL on every call; on an operation's path of some fifteen statements that was a
 * sixth of the CPU (measured), and each new SQL string had to be hashed again to find its
 * prepared statement. A prepared query is written with the query builder as usual: its builder
 * is called once per dialect with placeholders for its arguments, and each run binds the values
 * to the compiled SQL (the same string every time, so the driver's statement cache finds it at
 * once). The builder must not look at its arguments, only place them.
 */
import { createQueryId, type CompiledQuery, type Compilable, type Kysely, type QueryResult, type RootOperationNode } from 'kysely';
import { RootQueries } from './root-queries.js';
import { UnitOfWork } from './unit-of-work.js';

/** What a prepared query runs on: the root instance, a unit of work, or any Kysely instance or transaction. */
type Queryable = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Stands for argument `index` while the builder runs; never a value a caller could send. */
const placeholderPrefix = '\u0000coregate-argument-';

type Slot = { argument: number } | { constant: unknown };

interface Template {
  sql: string;
  query: RootOperationNode;
  slots: Slot[];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface PreparedQuery<A extends unknown[], R, DB = any> {
  execute(db: Kysely<DB>, ...args: A): Promise<QueryResult<R>>;
  /** The first row, or undefined. */
  first(db: Kysely<DB>, ...args: A): Promise<R | undefined>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface PreparedInsert<Row, DB = any> {
  /** Inserts one row. */
  execute(db: Kysely<DB>, row: Row): Promise<QueryResult<unknown>>;
  /** Inserts several rows in one statement (prepared once per row count). */
  executeRows(db: Kysely<DB>, rows: readonly Row[]): Promise<QueryResult<unknown>>;
}

/** The prepared queries of a schema `DB`: their builders see its tables (the store binds its own, src/store/prepared.ts). */
export interface PreparedQueries<DB> {
  preparedQuery<A extends unknown[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>): PreparedQuery<A, R, DB>;
  preparedQueryOfArity<R>(arity: number, build: (db: Kysely<DB>, args: unknown[]) => Compilable<R>): PreparedQuery<unknown[], R, DB>;
  preparedInsert<Row extends Record<string, unknown>>(columns: ReadonlyArray<keyof Row & string>, build: (db: Kysely<DB>, rows: Row[]) => Compilable<unknown>): PreparedInsert<Row, DB>;
}

export function preparedQueriesFor<DB>(): PreparedQueries<DB> {
  return { preparedQuery, preparedQueryOfArity, preparedInsert } as PreparedQueries<DB>;
}

/** A query whose arguments are the builder's own parameters after `db`. */
export function preparedQuery<A extends unknown[], R>(build: (db: Queryable, ...args: A) => Compilable<R>): PreparedQuery<A, R> {
  const run = prepared<R>(build.length - 1, (db, placeholders) => build(db, ...(placeholders as A)));
  return {
    execute: (db, ...args) => run(db, args),
    async first(db, ...args) {
      return (await run(db, args)).rows[0];
    },
  };
}

/** A query built from an argument list of a given length (for queries whose shape is chosen at run time). */
export function preparedQueryOfArity<R>(arity: number, build: (db: Queryable, args: unknown[]) => Compilable<R>): PreparedQuery<unknown[], R> {
  const run = prepared<R>(arity, build);
  return {
    execute: (db, ...args) => run(db, args),
    async first(db, ...args) {
      return (await run(db, args)).rows[0];
    },
  };
}

/** Row counts a multi-row insert is prepared for; more rows in one call are refused (a bug, not data). */
export const preparedInsertRowsMax = 64;

/**
 * An insert whose values are rows of these columns: the builder is given a row (or rows) of
 * placeholders and places them with `.values(...)`.
 */
export function preparedInsert<Row extends Record<string, unknown>>(
  columns: ReadonlyArray<keyof Row & string>,
  build: (db: Queryable, rows: Row[]) => Compilable<unknown>,
): PreparedInsert<Row> {
  const byCount = new Map<number, (db: Queryable, args: unknown[]) => Promise<QueryResult<unknown>>>();
  const runnerFor = (count: number) => {
    if (count < 1 || count > preparedInsertRowsMax) throw new RangeError(`a prepared insert takes 1 to ${preparedInsertRowsMax} rows, not ${count}`);
    let run = byCount.get(count);
    if (run === undefined) {
      run = prepared(count * columns.length, (db, placeholders) =>
        build(
          db,
          Array.from({ length: count }, (_, row) => Object.fromEntries(columns.map((column, index) => [column, placeholders[row * columns.length + index]])) as Row),
        ),
      );
      byCount.set(count, run);
    }
    return run;
  };
  // A column left undefined is NULL (Kysely would leave it out): every column is a parameter here.
  const width = columns.length;
  const executeRows = (db: Queryable, rows: readonly Row[]) => {
    // A plain loop: flatMap over map made two arrays per row (a fifth of a batch insert's CPU).
    const values = new Array<unknown>(rows.length * width);
    for (let row = 0; row < rows.length; row++) {
      const source = rows[row] as Row;
      for (let column = 0; column < width; column++) values[row * width + column] = source[columns[column] as keyof Row] ?? null;
    }
    return runnerFor(rows.length)(db, values);
  };
  return { execute: (db, row) => executeRows(db, [row]), executeRows };
}

function prepared<R>(arity: number, build: (db: Queryable, placeholders: unknown[]) => Compilable<R>): (db: Queryable, args: readonly unknown[]) => Promise<QueryResult<R>> {
  // One template per dialect: Kysely and its transactions share their adapter object. The
  // template is pure (SQL text and slots), so one query's cache serves every database.
  const templates = new WeakMap<object, Template>();
  return (db, args) => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (template === undefined) {
      template = compileTemplate(arity, build, db);
      templates.set(adapter, template);
    }
    const parameters = template.slots.map((slot) => ('argument' in slot ? args[slot.argument] : slot.constant));
    const compiled: CompiledQuery<R> = { sql: template.sql, query: template.query, parameters, queryId: createQueryId() };
    // In a unit of work, through its queue: statements issued together travel together.
    if (db instanceof UnitOfWork) return db.run<R>(compiled);
    // Outside one, straight to the store's driver (root-queries.ts).
    if (db instanceof RootQueries) return db.runDirect<R>(compiled);
    return db.executeQuery(compiled);
  };
}

/**
 * The SQL texts of every prepared query compiled so far: the PostgreSQL driver names their
 * statements. Process-wide on purpose: a text is a pure function of a builder and a dialect, the
 * same for every database, and the set is bounded by the queries written in the code.
 */
const preparedTexts = new Set<string>();

export function isPreparedStatementText(sql: string): boolean {
  return preparedTexts.has(sql);
}

function compileTemplate<R>(arity: number, build: (db: Queryable, placeholders: unknown[]) => Compilable<R>, db: Queryable): Template {
  const placeholders = Array.from({ length: arity }, (_, index) => `${placeholderPrefix}${index}`);
  const compiled = build(db, placeholders).compile();
  const used = new Set<number>();
  const slots = compiled.parameters.map((parameter): Slot => {
    if (typeof parameter !== 'string' || !parameter.includes(placeholderPrefix)) return { constant: parameter };
    const argument = placeholders.indexOf(parameter);
    if (argument < 0) throw new Error(`prepared query: an argument was transformed, not placed: ${compiled.sql}`);
    used.add(argument);
    return { argument };
  });
  if (used.size !== arity) throw new Error(`prepared query: ${arity - used.size} of its ${arity} arguments are not parameters of ${compiled.sql}`);
  preparedTexts.add(compiled.sql);
  return { sql: compiled.sql, query: compiled.query, slots };
}
