/** The driver's error in words that say what to do (issue 12: "Database migration unknown failed" said neither). */
export function databaseProblem(error: unknown): string {
  const { code, message = String(error), address, port } = error as { code?: string; message?: string; address?: string; port?: number };
  const fix = 'check --db / COREGATE_DB';
  switch (code) {
    case 'ECONNREFUSED':
      return `nothing accepts connections at ${address ?? 'its host'}${port ? `:${port}` : ''} (is PostgreSQL running?); ${fix}`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `its host name does not resolve (${message}); ${fix}`;
    case '3D000':
      return `${message}: create it (createdb, or CREATE DATABASE) or ${fix}`;
    case '28P01':
    case '28000':
      return `${message}: the user or password is refused; ${fix}`;
    case 'SQLITE_CANTOPEN':
    case 'SQLITE_READONLY':
    case 'SQLITE_PERM':
      return `${message}: the file cannot be opened for writing; check its directory and permissions, or ${fix}`;
    case 'SQLITE_NOTADB':
    case 'SQLITE_CORRUPT':
      return `${message}: the file is not a coregate SQLite database; ${fix}`;
    default:
      return `${message}; ${fix}`;
  }
}
