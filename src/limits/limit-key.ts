/**
 * Keys of the limit stores: `kind:part:part...`, each part percent-encoded so that no part can
 * run into the next (a client id may contain ':'). Parts come from the caller (a presented client
 * id can be 16 KiB of anything), so a long part is replaced by its SHA-256: a key stays short in
 * memory and in Redis whatever the request sent. Keys hold no secret: callers pass realm names,
 * client ids and addresses only.
 */
import { createHash } from 'node:crypto';

/** An encoded part longer than this is stored as its SHA-256 (base64url, 43 characters) instead. */
export const limitKeyPartCharsMax = 128;

export function limitKey(kind: string, ...parts: string[]): string {
  return [kind, ...parts.map(keyPart)].join(':');
}

function keyPart(part: string): string {
  const encoded = encodeURIComponent(part);
  if (encoded.length <= limitKeyPartCharsMax) return encoded;
  return `sha256~${createHash('sha256').update(part, 'utf8').digest('base64url')}`;
}
