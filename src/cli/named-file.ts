/**
 * Files a command's flag names (a request body, a JWK set, a key, a TLS certificate): read, or
 * refused in words. A bare `ENOENT` left a newcomer guessing which of the command's files was
 * meant and what to do (issue 27); every refusal here names the flag, the file as given and as
 * looked for, why it cannot be read, and what to do, through the CLI's error path (exit 2).
 * The sandbox data file has its own words (src/sandbox/data-file.ts), with the same content.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { CommandError } from './command-error.js';

/** A named file that cannot be read, or whose content is not what the flag takes. */
export class NamedFileError extends CommandError {}

/**
 * `source`: what named the file, as the person wrote it: "--jwks", or "--tls-cert / COREGATE_TLS_CERT".
 * `what`: what the file should hold, for the refusal's advice ("the client's public keys").
 */
export function readNamedFile(source: string, file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new NamedFileError(unreadable(source, file, what, error as NodeJS.ErrnoException));
  }
}

/** A named file's text as JSON; text that is not JSON is refused naming the flag, the file and the parser's words. */
export function parseNamedJson(source: string, file: string, text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const name = file === '-' ? 'standard input' : file;
    throw new NamedFileError(`${source}: ${name} is not valid JSON (${(error as Error).message}): correct it; it must hold ${what}`);
  }
}

/** Why the file cannot be read, and what to do. */
function unreadable(source: string, file: string, what: string, error: NodeJS.ErrnoException): string {
  const where = `(looked for ${resolve(file)})`;
  switch (error.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return `${source}: ${file} does not exist ${where}: check the path (a relative one starts at the current directory); ${source} must name the file with ${what}`;
    case 'EACCES':
    case 'EPERM':
      return `${source}: ${file} cannot be read: permission denied ${where}: give the user running coregate read access to it (chmod/chown), or use a readable copy`;
    case 'EISDIR':
      return `${source}: ${file} is a directory, not a file ${where}: ${source} must name the file with ${what}`;
    default:
      return `${source}: ${file} cannot be read (${error.code ?? error.message}) ${where}: check that it is a readable file with ${what}`;
  }
}
