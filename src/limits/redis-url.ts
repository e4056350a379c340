/** Redis URLs as settings: `redis://` or `rediss://` (TLS), shown without their credentials. */

export function isRedisUrl(value: string): boolean {
  if (!/^rediss?:\/\/[^/?#]+/i.test(value)) return false;
  try {
    return new URL(value).hostname !== '';
  } catch {
    return false;
  }
}

/** The URL with any user and password replaced, for logs and error messages. */
export function redactRedisUrl(value: string): string {
  return value.replace(/^([a-z]+:\/\/)[^@/?#]*@/i, '$1***@');
}
