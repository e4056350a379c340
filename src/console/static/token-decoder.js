// The token decoder: a pasted JWT's header and claims, decoded in the page. Nothing is sent
// anywhere and nothing is verified: the decoder shows what a token says, not whether it is valid.
import { html } from './html.js';
import { useState } from './vendor/hooks.js';
import { formatInstant, relativeTo } from './format.js';

function decodeSegment(segment) {
  const base64 = segment.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(segment.length / 4) * 4, '=');
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}

/** { header, claims } of a compact JWT, or { problem }. */
export function decodeJwt(text) {
  const token = text.trim().replace(/^Bearer\s+/i, '');
  if (token === '') return { problem: '' };
  const parts = token.split('.');
  if (parts.length !== 3) return { problem: 'A JWT has three parts separated by dots (header.claims.signature).' };
  try {
    return { header: decodeSegment(parts[0]), claims: decodeSegment(parts[1]) };
  } catch {
    return { problem: 'The header or the claims are not base64url-encoded JSON.' };
  }
}

function timeClaim(claims, name) {
  const value = claims[name];
  if (typeof value !== 'number') return null;
  return html`<li><strong>${name}</strong> ${formatInstant(new Date(value * 1000).toISOString())} (${relativeTo(value * 1000)})</li>`;
}

export function TokenDecoder() {
  const [text, setText] = useState('');
  const decoded = decodeJwt(text);
  const expired = decoded.claims && typeof decoded.claims.exp === 'number' && decoded.claims.exp * 1000 < Date.now();
  return html`
    <section class="panel" id="token-decoder">
      <h2>Token decoder</h2>
      <p class="hint">Paste an access token: its header and claims are decoded here, in the page. Nothing is sent anywhere, and the signature is not checked.</p>
      <textarea rows="4" spellcheck="false" placeholder="eyJhbGciOi…" value=${text} onInput=${(event) => setText(event.target.value)} aria-label="JWT"></textarea>
      ${decoded.problem ? html`<p class="error">${decoded.problem}</p>` : null}
      ${decoded.claims
        ? html`
            <p class=${expired ? 'error' : 'ok'} data-token-expiry>${typeof decoded.claims.exp === 'number' ? (expired ? 'Expired' : 'Not expired') : 'No exp claim'}</p>
            <ul class="claims">${timeClaim(decoded.claims, 'iat')}${timeClaim(decoded.claims, 'nbf')}${timeClaim(decoded.claims, 'exp')}</ul>
            <div class="columns">
              <div><h3>Header</h3><pre data-token-header>${JSON.stringify(decoded.header, null, 2)}</pre></div>
              <div><h3>Claims</h3><pre data-token-claims>${JSON.stringify(decoded.claims, null, 2)}</pre></div>
            </div>`
        : null}
    </section>`;
}
