// The operator API, as the console calls it: same origin, the session cookie, JSON both ways.
// Nothing else is ever called: no other host, no secret in the page.

const prefix = '/operator/v1';

/** GET a path of the operator API: { status, body } (body null when not JSON). */
export async function getJson(path) {
  const response = await fetch(prefix + path, { credentials: 'same-origin', headers: { accept: 'application/json' } });
  return { status: response.status, body: await readBody(response) };
}

/** POST JSON to a path of the operator API (the session cookie and same-origin Origin go along). */
export async function postJson(path, body) {
  const response = await fetch(prefix + path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { accept: 'application/json', 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  return { status: response.status, body: await readBody(response) };
}

async function readBody(response) {
  const text = await response.text();
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** A short reason for a failed answer: the operator API's message, or the status. */
export function failureText(answer) {
  if (answer.status === 404) return 'Not available on this server.';
  const message = answer.body && typeof answer.body.message === 'string' ? answer.body.message : '';
  return `${answer.status}${message ? `: ${message}` : ''}`;
}
