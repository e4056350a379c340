/**
 * Rows made by a function compiled once per statement: one object literal with the statement's
 * column names, so every row gets the same hidden class at once (both drivers: better-sqlite3
 * built rows a property at a time in C++, pg field by field). Later columns of a repeated name
 * win, as in either driver's own rows.
 */

/**
 * A function of `parameters` answering `{ name: valueOf(index), ... }` for the column names;
 * undefined when a name cannot be a literal's key (`__proto__` would set the prototype).
 */
export function compileRowLiteral<F>(names: readonly string[], parameters: readonly string[], valueOf: (index: number) => string): F | undefined {
  if (names.includes('__proto__')) return undefined;
  const properties = names.map((name, index) => `${JSON.stringify(name)}: ${valueOf(index)}`);
  return new Function(...parameters, `return {${properties.join(', ')}};`) as F;
}
