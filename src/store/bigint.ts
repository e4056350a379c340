/** bigint columns come back as strings (pg) or numbers (better-sqlite3); the code uses bigint. */
export function toBigInt(value: bigint | string | number | null | undefined): bigint {
  if (value === null || value === undefined) throw new Error('expected an integer column value, got null');
  return typeof value === 'bigint' ? value : BigInt(value);
}
