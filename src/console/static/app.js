// The coregate console: one page over the operator API. The session cookie (HttpOnly) is the
// only credential, and the page never holds a secret.
import { html, render } from './html.js';
import { useEffect, useState } from './vendor/hooks.js';
import { getJson, postJson } from './api.js';
import { formatInstant } from './format.js';
import { sessionEndedEvent, usePoll } from './poll.js';
import { AuditSection, BankSection, BusinessDateSection, ClientsSection, LoansSection, OperationsSection, SandboxSection, TermDepositsSection, WebhooksSection } from './sections.js';
import { RequestsSection } from './requests.js';
import { TokenDecoder } from './token-decoder.js';

const sections = [
  { id: 'bank', title: 'Customers & accounts', view: BankSection },
  { id: 'term-deposits', title: 'Term deposits', view: TermDepositsSection },
  { id: 'loans', title: 'Loan facilities', view: LoansSection },
  { id: 'operations', title: 'Operations', view: OperationsSection },
  { id: 'audit', title: 'Audit trail', view: AuditSection },
  { id: 'clients', title: 'Clients', view: ClientsSection },
  { id: 'webhooks', title: 'Webhooks', view: WebhooksSection },
  { id: 'requests', title: 'Request log', view: RequestsSection, sandboxOnly: true },
  { id: 'business-date', title: 'Business date', view: BusinessDateSection },
  { id: 'sandbox', title: 'Sandbox', view: SandboxSection, sandboxOnly: true },
  { id: 'token-decoder', title: 'Token decoder', view: TokenDecoder },
];

/** "#operations?reference=…": the section, and what it is asked to show (a link from another view). */
function currentLocation() {
  const [id = '', query = ''] = window.location.hash.replace(/^#/, '').split('?');
  return { id: sections.some((section) => section.id === id) ? id : 'bank', params: Object.fromEntries(new URLSearchParams(query)) };
}

function LoggedOut({ message }) {
  return html`
    <main class="notice">
      <h1>coregate console</h1>
      <p>${message}</p>
      <p>Run <code>coregate console</code> (or look at the banner of <code>npm start</code>) and open the one-time login URL it prints.</p>
      <p><a href="/docs">API documentation</a> · <a href="/openapi.json">OpenAPI document</a></p>
    </main>`;
}

function BusinessDateBadge() {
  const date = usePoll('/business-date', 3000);
  if (!date || date.status !== 200) return null;
  return html`<span class="badge" title="The core's business date">Business date <strong>${date.body.businessDate}</strong></span>`;
}

function App() {
  const [session, setSession] = useState(null);
  const [location, setLocation] = useState(currentLocation());
  useEffect(() => {
    getJson('/session').then(setSession, (error) => setSession({ status: 0, body: { message: error.message } }));
    const follow = () => setLocation(currentLocation());
    const ended = () => setSession({ status: 401, body: null });
    window.addEventListener('hashchange', follow);
    window.addEventListener(sessionEndedEvent, ended);
    return () => {
      window.removeEventListener('hashchange', follow);
      window.removeEventListener(sessionEndedEvent, ended);
    };
  }, []);
  if (session === null) return html`<p class="loading">Loading the console…</p>`;
  if (session.status === 401) return html`<${LoggedOut} message="You are not logged in, or your session has ended." />`;
  if (session.status !== 200) return html`<${LoggedOut} message=${`The operator API did not answer as expected (${session.status}).`} />`;
  const who = session.body;
  const visible = sections.filter((section) => !section.sandboxOnly || who.sandbox);
  const active = visible.find((section) => section.id === location.id) ?? visible[0];
  const logout = async () => {
    await postJson('/session/logout', {});
    setSession({ status: 401, body: null });
  };
  return html`
    <header class="top">
      <div class="brand">coregate <span>console</span>${who.sandbox ? html`<span class="badge sandbox">sandbox</span>` : null}</div>
      <${BusinessDateBadge} />
      <nav class="links"><a href="/docs">API docs</a><a href="/openapi.json">OpenAPI</a></nav>
      <div class="who" data-session=${who.via}>
        ${who.via === 'session' ? html`Session until ${formatInstant(who.expiresAt)}` : html`Bearer token of ${who.clientId}`}
        ${who.via === 'session' ? html`<button type="button" class="link" onClick=${logout}>Log out</button>` : null}
      </div>
    </header>
    <div class="layout">
      <nav class="sections" aria-label="Sections">
        ${visible.map((section) => html`<a href=${`#${section.id}`} class=${section.id === active.id ? 'active' : ''} data-section-link=${section.id}>${section.title}</a>`)}
      </nav>
      <main><${active.view} key=${`${active.id}?${JSON.stringify(location.params)}`} params=${location.params} /></main>
    </div>`;
}

render(html`<${App} />`, document.getElementById('app'));
