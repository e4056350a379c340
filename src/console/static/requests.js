// The sandbox's request log (docs/sandbox.md, "The request log"): every client's business API
// requests and answers, with the filters a client has at GET /v1/sandbox/requests plus the client,
// each linked to its operation and to that operation's webhook deliveries. Credentials were never
// kept.
import { html } from './html.js';
import { useState } from './vendor/hooks.js';
import { failureText } from './api.js';
import { formatInstant, plural, statusClass } from './format.js';
import { usePoll } from './poll.js';

const filterNames = ['client', 'correlationId', 'status', 'path', 'since', 'reference'];

/** The operator API's query for the filters that are set. */
function queryOf(filters) {
  const query = new URLSearchParams({ limit: '50' });
  for (const name of filterNames) {
    if (!filters[name]) continue;
    // The form's local time as an instant; a time that is none (typed into the URL) is sent as typed, for the API to refuse.
    const since = name === 'since' ? new Date(filters[name]) : undefined;
    query.set(name, since && !Number.isNaN(since.getTime()) ? since.toISOString() : filters[name]);
  }
  return `/requests?${query}`;
}

function statusWord(status) {
  return status < 300 ? 'executed' : status < 500 ? 'rejected' : 'unknown';
}

function Exchange({ entry }) {
  const part = (title, side) => html`
    <div class="exchange-part">
      <strong>${title}</strong>
      <pre data-headers>${Object.entries(side.headers).map(([name, value]) => `${name}: ${value}`).join('\n')}</pre>
      ${side.body === null ? html`<p class="hint">No body.</p>` : html`<pre data-body>${typeof side.body === 'string' ? side.body : JSON.stringify(side.body, null, 2)}</pre>`}
    </div>`;
  return html`<div class="exchange">${part(`${entry.method} ${entry.path}`, entry.request)}${part(`Answer ${entry.status}`, entry.response)}</div>`;
}

export function RequestsSection({ params = {} }) {
  const [filters, setFilters] = useState(() => Object.fromEntries(filterNames.map((name) => [name, params[name] ?? ''])));
  const [applied, setApplied] = useState(filters);
  const [open, setOpen] = useState(null);
  const clients = usePoll('/clients', 10000);
  const requests = usePoll(queryOf(applied), 3000);
  const set = (name) => (event) => setFilters({ ...filters, [name]: event.target.value });
  const apply = (event) => {
    event.preventDefault();
    setApplied(filters);
  };
  const clear = () => {
    const empty = Object.fromEntries(filterNames.map((name) => [name, '']));
    setFilters(empty);
    setApplied(empty);
  };
  return html`
    <section class="panel" id="requests">
      <h2>Request log <span class="hint">(sandbox: every client's business requests of the last 7 days, newest first; never a credential)</span></h2>
      <form class="filters" onSubmit=${apply} data-request-filters>
        <label class="filter">Client <select name="client" value=${filters.client} onChange=${set('client')}>
          <option value="">any</option>
          ${clients?.status === 200 ? clients.body.clients.map((client) => html`<option value=${`${client.realm}/${client.clientId}`}>${client.realm}/${client.clientId}</option>`) : null}
        </select></label>
        <label class="filter">Correlation id <input name="correlationId" value=${filters.correlationId} onInput=${set('correlationId')} size="18" /></label>
        <label class="filter">Status <input name="status" value=${filters.status} onInput=${set('status')} placeholder="404 or 5xx" size="7" /></label>
        <label class="filter">Path <input name="path" value=${filters.path} onInput=${set('path')} placeholder="/v1/term-deposits" size="18" /></label>
        <label class="filter">Since <input name="since" type="datetime-local" value=${filters.since} onInput=${set('since')} /></label>
        ${filters.reference ? html`<label class="filter">Operation <input name="reference" value=${filters.reference} onInput=${set('reference')} size="36" /></label>` : null}
        <button type="submit">Filter</button> <button type="button" class="link" onClick=${clear}>Clear</button>
      </form>
      ${requests === null ? html`<p class="hint">Loading…</p>` : requests.status !== 200 ? html`<p class="error" data-request-log-error>${failureText(requests)}</p>` :
        requests.body.requests.length === 0 ? html`<p class="hint">No request matches. Requests appear here once a client calls the business API (a token request is not one).</p>` : html`
        <table class="clickable" data-request-log>
          <thead><tr><th>When</th><th>Client</th><th>Request</th><th>Status</th><th>Scenario</th><th>Correlation id</th><th class="number">ms</th><th>Operation</th></tr></thead>
          <tbody>${requests.body.requests.map((entry) => html`
            <tr key=${entry.id} data-request=${entry.id} onClick=${() => setOpen(open === entry.id ? null : entry.id)}>
              <td>${formatInstant(entry.recordedAt)}</td>
              <td>${entry.client.realm ? `${entry.client.realm}/` : ''}${entry.client.clientId}</td>
              <td class="mono">${entry.method} ${entry.path}</td>
              <td><span class=${statusClass(statusWord(entry.status))} data-status=${entry.status}>${entry.status}</span></td>
              <td>${entry.scenario ? html`<span class="badge scenario" data-scenario=${entry.scenario}>${entry.scenario}</span>` : '–'}</td>
              <td class="mono">${entry.correlationId ?? '–'}</td>
              <td class="number">${entry.durationMs}</td>
              <td>${entry.operationReference ? html`
                <a href=${`#operations?reference=${entry.operationReference}`} data-operation-link onClick=${(event) => event.stopPropagation()}>operation</a> ·
                <a href=${`#webhooks?reference=${entry.operationReference}`} onClick=${(event) => event.stopPropagation()}>deliveries</a>` : '–'}</td>
            </tr>
            ${open === entry.id ? html`<tr class="outcome" key=${`${entry.id}-exchange`}><td colspan="8"><${Exchange} entry=${entry} /></td></tr>` : null}`)}
          </tbody>
        </table>
        ${requests.body.more ? html`<p class="hint" data-more>Showing the newest ${plural(requests.body.requests.length, 'request')}; narrow the filters to see older ones.</p>` : null}`}
    </section>`;
}
