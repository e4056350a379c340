// The console's sections. Each reads one or two operator API paths (auto-refreshed) and shows
// them; controls post JSON to the operator API. Views of modules a server lacks say so.
import { html } from './html.js';
import { useState } from './vendor/hooks.js';
import { failureText, postJson } from './api.js';
import { BalanceChart, OperationsPerMinuteChart } from './charts.js';
import { formatInstant, formatMoney, plural, statusClass } from './format.js';
import { usePoll } from './poll.js';

/** Under a list cut short: how many rows it shows (the operator API answers `more` when rows are left). */
function MoreHint({ page, count, noun, pluralNoun }) {
  return page.more ? html`<p class="hint" data-more>Showing the newest ${plural(count, noun, pluralNoun)}.</p>` : null;
}

/** Renders an answer's body with `view`, or why there is none. */
function Answer({ answer, children: view }) {
  if (answer === null) return html`<p class="hint">Loading…</p>`;
  if (answer.status !== 200) return html`<p class=${answer.status === 404 || answer.status === 501 ? 'unavailable' : 'error'}>${failureText(answer)}</p>`;
  return view(answer.body);
}

function Money({ money }) {
  return html`<span class="money" data-amount=${money?.amount} data-currency=${money?.currency}>${formatMoney(money)}</span>`;
}

export function BankSection() {
  const customers = usePoll('/customers');
  const accounts = usePoll('/accounts');
  const [selected, setSelected] = useState(null);
  return html`
    <section class="panel" id="bank">
      <h2>Customers and accounts</h2>
      <${Answer} answer=${customers}>${(body) => html`
        <table>
          <thead><tr><th>Customer</th><th>Name</th><th>Status</th><th>Accounts</th></tr></thead>
          <tbody>${body.customers.map((customer) => html`
            <tr key=${customer.customerReference}><td>${customer.customerReference}</td><td>${customer.name ?? '–'}</td><td><span class=${statusClass(customer.status)}>${customer.status}</span></td><td class="number">${customer.accounts}</td></tr>`)}
          </tbody>
        </table>`}<//>
      <h3>Accounts <span class="hint">(live balances; click an account for its postings)</span></h3>
      <${Answer} answer=${accounts}>${(body) => html`
        <table class="clickable">
          <thead><tr><th>Account</th><th>Customer</th><th>Status</th><th class="number">Balance</th></tr></thead>
          <tbody>${body.accounts.map((account) => html`
            <tr key=${account.accountNumber} data-account=${account.accountNumber} class=${selected === account.accountNumber ? 'selected' : ''} onClick=${() => setSelected(account.accountNumber)}>
              <td><a href=${`#account-${account.accountNumber}`} onClick=${(event) => { event.preventDefault(); setSelected(account.accountNumber); }}>${account.accountNumber}</a></td>
              <td>${account.customerReference ?? '–'}</td>
              <td><span class=${statusClass(account.status)}>${account.status}</span></td>
              <td class="number" data-balance=${account.balance.amount}><${Money} money=${account.balance} /></td>
            </tr>`)}
          </tbody>
        </table>`}<//>
      ${selected ? html`<${AccountDetail} accountNumber=${selected} />` : null}
    </section>`;
}

function AccountDetail({ accountNumber }) {
  const postings = usePoll(`/accounts/${encodeURIComponent(accountNumber)}/postings?limit=20`);
  const history = usePoll(`/accounts/${encodeURIComponent(accountNumber)}/balance-history`);
  return html`
    <div class="detail" id="account-detail" data-detail-account=${accountNumber}>
      <h3>Account ${accountNumber}</h3>
      <${Answer} answer=${history}>${(body) => html`<${BalanceChart} history=${body} />`}<//>
      <${Answer} answer=${postings}>${(body) => html`
        <table>
          <thead><tr><th>When</th><th>Business date</th><th>Movement</th><th>Reference</th><th class="number">Amount</th><th class="number">Balance after</th></tr></thead>
          <tbody>${body.postings.map((posting) => html`
            <tr key=${`${posting.movementId}:${posting.line}`} data-posting=${posting.reference}>
              <td>${formatInstant(posting.createdAt)}</td><td>${posting.businessDate}</td><td>${posting.description ?? posting.kind}</td>
              <td class="mono">${posting.reference}</td>
              <td class="number"><${Money} money=${posting.amount} /></td><td class="number"><${Money} money=${posting.balanceAfter} /></td>
            </tr>`)}
          </tbody>
        </table>
        ${body.more ? html`<p class="hint">Showing the newest ${plural(body.limit, 'posting')}.</p>` : null}`}<//>
    </div>`;
}

/** A matured deposit's interest was paid at its maturity: shown as paid, never as expected. */
function InterestCell({ deposit }) {
  const paid = deposit.interestPaid !== null && deposit.interestPaid !== undefined;
  return html`<td class="number" data-interest=${paid ? 'paid' : 'expected'}><${Money} money=${paid ? deposit.interestPaid : deposit.expectedInterest} /> <span class="hint">${paid ? 'paid at maturity' : 'expected'}</span></td>`;
}

export function TermDepositsSection() {
  const deposits = usePoll('/term-deposits');
  return html`
    <section class="panel" id="term-deposits">
      <h2>Term deposits</h2>
      <${Answer} answer=${deposits}>${(body) => body.termDeposits.length === 0 ? html`<p class="hint">No term deposit yet: initiate one through the business API.</p>` : html`
        <table>
          <thead><tr><th>Deposit</th><th>Customer</th><th class="number">Principal</th><th class="number">Rate</th><th>Day count</th><th>Value date</th><th>Maturity</th><th class="number">Interest</th><th>Status</th></tr></thead>
          <tbody>${body.termDeposits.map((deposit) => html`
            <tr key=${deposit.termDepositAccount} data-deposit=${deposit.termDepositAccount}>
              <td class="mono">${deposit.termDepositAccount}</td><td>${deposit.customerReference}</td>
              <td class="number"><${Money} money=${deposit.principal} /></td><td class="number">${deposit.ratePercent} %</td><td>${deposit.dayCount}</td>
              <td>${deposit.valueDate}</td><td>${deposit.maturityDate} <span class="hint">(${deposit.numberOfDays} d)</span></td>
              <${InterestCell} deposit=${deposit} />
              <td data-deposit-status><span class=${statusClass(deposit.status)}>${deposit.status}</span></td>
            </tr>`)}
          </tbody>
        </table>`}<//>
    </section>`;
}

export function LoansSection() {
  const loans = usePoll('/loan-facilities');
  return html`
    <section class="panel" id="loans">
      <h2>Loan facilities</h2>
      <${Answer} answer=${loans}>${(body) => body.loanFacilities.map((facility) => html`
        <div class="facility" key=${facility.merchandisingLoanId} data-facility=${facility.merchandisingLoanId}>
          <h3>${facility.merchandisingLoanId} <span class="hint">${facility.loanType} · ${facility.parameterType} · customer ${facility.customerReference}</span> <span class=${statusClass(facility.status)}>${facility.status}</span></h3>
          <dl class="figures">
            <div><dt>Outstanding</dt><dd><${Money} money=${facility.outstanding} /></dd></div>
            <div><dt>Limit used</dt><dd><${Money} money=${facility.limitUsed} /> of <${Money} money=${facility.approvedLimit} /> (${facility.limitUsedPercent} %)</dd></div>
            <div><dt>Final maturity</dt><dd>${facility.finalMaturityDate}</dd></div>
          </dl>
          <div class="meter" aria-hidden="true"><span style=${`width: ${Math.min(100, Number(facility.limitUsedPercent))}%`}></span></div>
          <table>
            <thead><tr><th>#</th><th>Due</th><th class="number">Amount</th><th class="number">Paid</th><th class="number">Outstanding</th><th>Status</th></tr></thead>
            <tbody>${facility.installments.map((installment) => html`
              <tr key=${installment.sequence}><td>${installment.sequence}</td><td>${installment.dueDate}</td>
                <td class="number"><${Money} money=${installment.amount} /></td><td class="number"><${Money} money=${installment.paid} /></td>
                <td class="number"><${Money} money=${installment.outstanding} /></td><td data-installment-status><span class=${statusClass(installment.status)}>${installment.status}</span></td></tr>`)}
            </tbody>
          </table>
        </div>`)}<//>
    </section>`;
}

/** "422 BUSINESS_RULE_VIOLATION TD-422-002: message" from an error record (the loan family wraps it in { error }). */
function errorSummary(error) {
  const record = error.error ?? error;
  const code = record.errordetail?.[0]?.code;
  return `${record.status ?? ''} ${record.reason ?? ''}${code ? ` ${code}` : ''}: ${record.message ?? ''}`;
}

const operationStatuses = ['', 'Executed', 'Rejected', 'Pending', 'Unknown', 'InFlight'];

/** One operation's row, and its outcome when opened (or when it has an error record). */
function OperationRows({ operation, open, setOpen }) {
  return html`
    <tr key=${operation.reference} data-operation=${operation.reference} onClick=${() => setOpen(open === operation.reference ? null : operation.reference)}>
      <td>${formatInstant(operation.createdAt)}</td><td>${operation.operation}</td>
      <td><span class=${statusClass(operation.status)}>${operation.status}</span>${operation.httpStatus ? html` <span class="hint">${operation.httpStatus}</span>` : null}</td>
      <td>${operation.scenario ? html`<span class="badge scenario" data-scenario=${operation.scenario} title="Forced by the sandbox scenario (Coregate-Scenario)">${operation.scenario}</span>` : '–'}</td>
      <td>${operation.client.realm ? `${operation.client.realm}/` : ''}${operation.client.clientId}</td>
      <td>${operation.user ?? '–'}</td><td>${operation.workstation ?? '–'}</td>
      <td class="mono">${operation.correlationId}</td><td class="mono">${operation.reference}</td>
    </tr>
    ${open === operation.reference || operation.error ? html`
      <tr class="outcome" key=${`${operation.reference}-outcome`}><td colspan="9">
        ${operation.error ? html`<div class="error-record" data-error-record=${operation.reference}>
            <strong>Error record</strong> ${errorSummary(operation.error)}
            ${open === operation.reference ? html`<pre>${JSON.stringify(operation.error, null, 2)}</pre>` : null}</div>` : null}
        ${open === operation.reference && operation.result ? html`<div><strong>Result</strong><pre>${JSON.stringify(operation.result, null, 2)}</pre></div>` : null}
        ${open === operation.reference ? html`<p><a href=${`#webhooks?reference=${operation.reference}`}>Its webhook deliveries</a> · <a href=${`#requests?reference=${operation.reference}`}>Its requests</a></p>` : null}
      </td></tr>` : null}`;
}

/**
 * Operations the core refused with a refusal coregate cannot name (REJECTED_BY_CORE): a
 * finding of `coregate check`, shown above the operations while there are any in the look-back
 * window. Read every 30 s: it scans the week's rejected operations.
 */
function UnrecognisedCoreRefusals() {
  const found = usePoll('/findings/unrecognised-core-refusals', 30000);
  if (found === null || found.status !== 200) return null;
  // Read, and none: an empty marker says so (the page shows nothing; a test can tell "none" from "not read yet").
  if (found.body.count === 0) return html`<span hidden data-unrecognised-core-refusals="0"></span>`;
  const { count, lookbackDays, operations } = found.body;
  return html`
    <div class="error" data-unrecognised-core-refusals=${count}>
      <p><strong>${plural(count, 'operation')} in the last ${lookbackDays} days refused by the core with a refusal coregate cannot name</strong>
        (${found.body.reason}): settled Rejected as the core said, but the core answers outside its protocol. Its refusals must use the error catalogue's names and codes (docs/core-protocol.md); <code>coregate check</code> reports it.</p>
      <ul>${operations.map((operation) => html`<li key=${operation.reference}><a href=${`#operations?reference=${operation.reference}`}>${operation.reference}</a> ${operation.code}: ${operation.message}</li>`)}</ul>
    </div>`;
}

const operationHeader = html`<thead><tr><th>Created</th><th>Operation</th><th>Status</th><th>Scenario</th><th>Client</th><th>User</th><th>Workstation</th><th>Correlation id</th><th>Reference</th></tr></thead>`;

export function OperationsSection({ params = {} }) {
  const [status, setStatus] = useState('');
  const [open, setOpen] = useState(params.reference ?? null);
  // A link from another view (the request log) names one operation: it is shown alone.
  // Only a reference's characters reach the operator API's path (a typed hash could hold "..").
  const reference = /^[A-Za-z0-9-]{1,64}$/.test(params.reference ?? '') ? params.reference : undefined;
  const one = usePoll(reference ? `/operations/${reference}` : null);
  const operations = usePoll(params.reference !== undefined ? null : `/operations?limit=50${status ? `&status=${status}` : ''}`);
  const perMinute = usePoll('/metrics/operations-per-minute', 5000);
  return html`
    <section class="panel" id="operations">
      <h2>Operations</h2>
      <${UnrecognisedCoreRefusals} />
      ${params.reference !== undefined ? html`
        <p class="hint">Operation ${params.reference} · <a href="#operations">all operations</a></p>
        ${reference === undefined ? html`<p class="error">Not an operation reference.</p>` : html`<${Answer} answer=${one}>${(operation) => html`
          <table class="clickable">${operationHeader}<tbody><${OperationRows} operation=${operation} open=${open} setOpen=${setOpen} /></tbody></table>`}<//>`}` : html`
        <h3>Per minute, by outcome <span class="hint">(last hour)</span></h3>
        <${Answer} answer=${perMinute}>${(body) => html`<${OperationsPerMinuteChart} perMinute=${body} />`}<//>
        <label class="filter">Status <select value=${status} onChange=${(event) => setStatus(event.target.value)}>
          ${operationStatuses.map((value) => html`<option value=${value}>${value || 'any'}</option>`)}
        </select></label>
        <${Answer} answer=${operations}>${(body) => body.operations.length === 0 ? html`<p class="hint">No operation yet.</p>` : html`
          <table class="clickable">${operationHeader}
            <tbody>${body.operations.map((operation) => html`<${OperationRows} operation=${operation} open=${open} setOpen=${setOpen} />`)}</tbody>
          </table>
          <${MoreHint} page=${body} count=${body.operations.length} noun="operation" />`}<//>`}
    </section>`;
}

export function AuditSection() {
  const records = usePoll('/audit?limit=50');
  const verification = usePoll('/audit/verification', 5000);
  return html`
    <section class="panel" id="audit">
      <h2>Audit trail</h2>
      <${Answer} answer=${verification}>${(body) => html`
        <p class=${body.ok ? 'chain ok' : 'chain error'} data-chain=${body.ok ? 'ok' : 'broken'}>
          ${body.ok ? `Chain verified: ${plural(body.chained, 'record')} linked${body.unchained ? `, ${body.unchained} awaiting chaining` : ''}.` : `Chain BROKEN at position ${body.problem?.chainSeq} (record ${body.problem?.id}): ${body.problem?.issue}.`}
          <span class="hint"> Verified ${formatInstant(body.verifiedAt)}.</span>
        </p>`}<//>
      <${Answer} answer=${records}>${(body) => html`
        <table>
          <thead><tr><th>#</th><th>Recorded</th><th>Operation</th><th>Outcome</th><th>HTTP</th><th>Client</th><th>User</th><th>Workstation</th><th>Correlation id</th><th class="number">ms</th></tr></thead>
          <tbody>${body.records.map((record) => html`
            <tr key=${record.id}><td>${record.chainSeq ?? '…'}</td><td>${formatInstant(record.recordedAt)}</td><td>${record.operation}</td>
              <td><span class=${statusClass(record.outcome)}>${record.outcome}</span></td><td>${record.httpStatus}</td>
              <td>${record.client.realm ? `${record.client.realm}/` : ''}${record.client.clientId}</td><td>${record.user ?? '–'}</td><td>${record.workstation ?? '–'}</td>
              <td class="mono">${record.correlationId ?? '–'}</td><td class="number">${record.durationMs}</td></tr>`)}
          </tbody>
        </table>
        <${MoreHint} page=${body} count=${body.records.length} noun="audit record" />`}<//>
    </section>`;
}

export function ClientsSection() {
  const clients = usePoll('/clients', 10000);
  return html`
    <section class="panel" id="clients">
      <h2>Clients</h2>
      <p class="hint">Client secrets are stored only as hashes and never shown; <code>coregate clients rotate-secret</code> issues a new one.</p>
      <${Answer} answer=${clients}>${(body) => html`
        <table>
          <thead><tr><th>Realm</th><th>Client</th><th>Enabled</th><th>Scopes</th><th>Technical user</th><th>Default workstation</th></tr></thead>
          <tbody>${body.clients.map((client) => html`
            <tr key=${`${client.realm}/${client.clientId}`}><td>${client.realm}</td><td>${client.clientId}</td><td>${client.enabled ? 'yes' : 'no'}</td>
              <td>${client.scopes.map((scope) => html`<span class="scope">${scope}</span> `)}</td><td>${client.technicalUser ?? '–'}</td><td>${client.defaultWorkstation ?? '–'}</td></tr>`)}
          </tbody>
        </table>`}<//>
    </section>`;
}

/** What to do when no endpoint is registered: the CLI command and the operator API call (docs/webhooks.md). */
function NoEndpointYet() {
  return html`
    <div class="hint" data-no-endpoint>
      <p>No webhook endpoint is registered yet. An endpoint belongs to a client (realm and client id); register one with the CLI, which prints its secret once:</p>
      <pre>coregate webhooks add --realm REALM --client-id CLIENT_ID --url https://receiver.example/hooks [--event-types operation.executed,termDeposit.matured]</pre>
      <p>or with the operator API: <code>POST /operator/v1/webhooks/endpoints</code> with <code>{"realm", "clientId", "url", "eventTypes"?}</code> (answers the secret once), or in the data file's <code>webhooks</code>. See docs/webhooks.md.</p>
    </div>`;
}

/** Endpoints grouped by client (realm, then client id), each client's oldest first as listed. */
function EndpointsTable({ endpoints }) {
  const clientOf = (endpoint) => `${endpoint.realm}/${endpoint.clientId}`;
  const byClient = [...endpoints].sort((a, b) => (clientOf(a) < clientOf(b) ? -1 : clientOf(a) > clientOf(b) ? 1 : 0));
  return html`
    <table>
      <thead><tr><th>Client</th><th>URL</th><th>Events</th><th>Registered</th><th>Status</th></tr></thead>
      <tbody>${byClient.map((endpoint) => html`
        <tr key=${endpoint.id} data-endpoint=${endpoint.id}>
          <td>${endpoint.realm}/${endpoint.clientId}</td><td class="mono">${endpoint.url}</td>
          <td>${endpoint.eventTypes.length === 0 ? 'every event' : endpoint.eventTypes.join(', ')}</td>
          <td>${formatInstant(endpoint.createdAt)}</td>
          <td><span class=${statusClass(endpoint.enabled ? 'Active' : 'Disabled')}>${endpoint.enabled ? 'Enabled' : 'Disabled'}</span></td>
        </tr>`)}
      </tbody>
    </table>`;
}

export function WebhooksSection({ params = {} }) {
  const endpoints = usePoll('/webhooks/endpoints', 3000);
  // A link from an operation or a request names its reference: its deliveries only.
  const deliveries = usePoll(`/webhooks/deliveries?limit=50${params.reference ? `&reference=${encodeURIComponent(params.reference)}` : ''}`, 3000);
  return html`
    <section class="panel" id="webhooks">
      <h2>Webhooks</h2>
      <h3>Endpoints <span class="hint">(by client; secrets are shown only when registered)</span></h3>
      <${Answer} answer=${endpoints}>${(body) => body.endpoints.length === 0 ? html`<${NoEndpointYet} />` : html`<${EndpointsTable} endpoints=${body.endpoints} />`}<//>
      <h3>Deliveries <span class="hint">(newest first${params.reference ? html`; of operation ${params.reference} · <a href="#webhooks">all</a>` : ''})</span></h3>
      <${Answer} answer=${deliveries}>${(body) => body.deliveries.length === 0 ? html`<p class="hint">No delivery yet.</p>` : html`
        <table>
          <thead><tr><th>Created</th><th>Event</th><th>Endpoint</th><th>Status</th><th class="number">Attempts</th><th>Last answer</th><th>Next attempt</th></tr></thead>
          <tbody>${body.deliveries.map((delivery) => html`
            <tr key=${delivery.id}><td>${formatInstant(delivery.createdAt)}</td><td>${delivery.eventType}</td><td class="mono">${delivery.url}</td>
              <td><span class=${statusClass(delivery.status)}>${delivery.status}</span></td><td class="number">${delivery.attempts}</td>
              <td>${delivery.lastStatusCode ?? ''} ${delivery.lastError ?? ''}</td><td>${delivery.nextAttemptAt ? formatInstant(delivery.nextAttemptAt) : '–'}</td></tr>`)}
          </tbody>
        </table>
        <${MoreHint} page=${body} count=${body.deliveries.length} noun="delivery" pluralNoun="deliveries" />`}<//>
    </section>`;
}

export function BusinessDateSection() {
  const date = usePoll('/business-date', 3000);
  const [to, setTo] = useState('');
  const [outcome, setOutcome] = useState(null);
  const advance = async (event) => {
    event.preventDefault();
    setOutcome({ text: 'Running end of day…' });
    const answer = await postJson('/business-date/advance', { to });
    if (answer.status === 200) {
      const report = answer.body;
      setOutcome({ ok: true, text: `Advanced from ${report.from} to ${report.to}: ${plural(report.daysClosed.length, 'business day')} closed, ${plural(report.maturedDeposits, 'deposit')} matured, ${plural(report.overdueInstallments, 'installment')} overdue.` });
    } else setOutcome({ ok: false, text: failureText(answer) });
  };
  return html`
    <section class="panel" id="business-date">
      <h2>Business date</h2>
      <${Answer} answer=${date}>${(body) => html`
        <p class="big" data-business-date=${body.businessDate}>${body.businessDate}</p>
        <form class="inline" onSubmit=${advance}>
          <label>Advance to <input type="date" required value=${to} min=${body.businessDate} onInput=${(event) => setTo(event.target.value)} name="to" /></label>
          <button type="submit">Run end of day</button>
        </form>
        ${outcome ? html`<p class=${outcome.ok === false ? 'error' : 'ok'} data-advance-outcome>${outcome.text}</p>` : null}`}<//>
    </section>`;
}

export function SandboxSection() {
  const [outcome, setOutcome] = useState(null);
  const reset = async () => {
    if (!window.confirm('Reset the sandbox? Every operation, deposit and balance goes back to the data file.')) return;
    const answer = await postJson('/sandbox/reset', { confirm: 'reset' });
    setOutcome(answer.status === 200 ? { ok: true, text: 'The sandbox was reset to its data file.' } : { ok: false, text: failureText(answer) });
  };
  return html`
    <section class="panel" id="sandbox">
      <h2>Sandbox</h2>
      <p class="hint">Reloads the data file into an empty store: every operation, deposit and posting made since is gone.</p>
      <button type="button" class="danger" onClick=${reset} data-sandbox-reset>Reset the sandbox…</button>
      ${outcome ? html`<p class=${outcome.ok ? 'ok' : 'error'}>${outcome.text}</p>` : null}
    </section>`;
}
