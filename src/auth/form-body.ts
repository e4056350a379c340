/**
 * Form parameters of the token and introspection endpoints. RFC 6749 §3.2: parameters must not be
 * sent more than once, and the body must be application/x-www-form-urlencoded; each value is
 * bounded and free of control characters (as the business API's fields: docs/api.md, "Order of
 * checks").
 */
import { invalidRequest } from './oauth-error.js';

export type FormParameters = ReadonlyMap<string, string>;

/** The longest form value read, in characters: an access token (introspection) is far shorter. */
export const formValueCharsMax = 8_192;

export function parseFormBody(contentType: string | undefined, body: unknown): FormParameters {
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/x-www-form-urlencoded') {
    throw invalidRequest('The request body must be application/x-www-form-urlencoded');
  }
  const text = typeof body === 'string' ? body : '';
  const parameters = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(text)) {
    if (parameters.has(name)) throw invalidRequest(`Parameter ${truncate(name)} is included more than once`);
    // The business API's rules on the form too: bounded, no control characters, valid UTF-8 (a bad
    // percent-encoded sequence decodes to U+FFFD, which no client id, secret or token holds).
    if (value.length > formValueCharsMax) throw invalidRequest(`Parameter ${truncate(name)} is longer than ${formValueCharsMax} characters`);
    if (/[\u0000-\u001f\u007f\ufffd]/.test(value) || /[\u0000-\u001f\u007f\ufffd]/.test(name)) {
      throw invalidRequest(`Parameter ${truncate(name)} holds a control character or bytes that are not UTF-8`);
    }
    parameters.set(name, value);
  }
  return parameters;
}

/** A form value, with the empty string taken as absent (as HTML forms send unset fields). */
export function formValue(parameters: FormParameters, name: string): string | undefined {
  const value = parameters.get(name);
  return value === undefined || value === '' ? undefined : value;
}

function truncate(name: string): string {
  const safe = name.replace(/[^\x20-\x7e]/g, '?');
  return safe.length > 64 ? `${safe.slice(0, 64)}...` : safe;
}
