/** Endpoint signing secrets: `whsec_` and 32 random bytes in base64, as Standard Webhooks names them. */
import { randomBytes } from 'node:crypto';

export const secretPrefix = 'whsec_';
/** Bytes of a generated secret; a given one must decode to at least this many. */
const secretBytes = 32;
const givenSecretBytesMin = 24;
const givenSecretBytesMax = 64;

export function newEndpointSecret(): string {
  return secretPrefix + randomBytes(secretBytes).toString('base64');
}

/** A secret given by an operator or a data file: answers why it is unfit, or undefined. */
export function secretProblem(secret: string): string | undefined {
  if (!secret.startsWith(secretPrefix)) return `a webhook secret starts with ${secretPrefix}`;
  const body = secret.slice(secretPrefix.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(body)) return `a webhook secret is ${secretPrefix} followed by base64`;
  const bytes = Buffer.from(body, 'base64').length;
  if (bytes < givenSecretBytesMin || bytes > givenSecretBytesMax) return `a webhook secret holds ${givenSecretBytesMin} to ${givenSecretBytesMax} bytes after ${secretPrefix}`;
  return undefined;
}
