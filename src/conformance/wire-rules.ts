/**
 * Failures are errors, not outcomes (docs/core-protocol.md, "Errors"): a malformed command is a
 * 400 and consumes nothing — the reference stays NotFound and a valid command under it executes —
 * and a route the core does not have is `404 NO_ROUTE`, never `{"status":"NotFound"}`. These are
 * sent as plain HTTP (the adapter never sends a malformed command), so they run against a core URL.
 */
import { randomUUID } from 'node:crypto';
import { check } from './checks.js';
import { RuleFailure, RuleSkipped } from './conformance-errors.js';
import type { ConformanceRule } from './conformance-rule.js';
import type { WireAnswer } from './wire-client.js';
import { protocolPrefix } from '../core-http/protocol.js';
import { loanCommandToWire, wire as installmentWire } from '../operations/loan-installment-execution/wire.js';
import { termDepositCommandToWire, wire as depositWire } from '../operations/term-deposit-initiation/wire.js';

/** The protocol's command paths with a reference in them (each operation's wire.ts, docs/core-protocol.md "Endpoints"). */
const withReference = (template: string) => (reference: string) => template.replace(':reference', encodeURIComponent(reference));
const codecPaths = {
  deposit: withReference(depositWire.path),
  installment: withReference(installmentWire.path),
};

function errorOf(answer: WireAnswer): unknown {
  return typeof answer.json === 'object' && answer.json !== null ? (answer.json as { error?: unknown }).error : undefined;
}

function shown(answer: WireAnswer): string {
  return `${answer.status} ${answer.text.slice(0, 300)}`;
}

export const wireRules: ConformanceRule[] = [
  {
    id: 'failures.malformed-command',
    title: 'failures are errors: a malformed command is 400 BAD_REQUEST and consumes nothing (the reference stays NotFound, a valid command under it executes); a route the core does not have is 404 NO_ROUTE',
    async run(context) {
      const wire = context.wire;
      if (!wire) throw new RuleSkipped('it sends plain HTTP: give the core\'s URL (an in-process adapter has no wire)');
      const deposit = termDepositCommandToWire(context.deposit()) as Record<string, unknown>;
      const installment = loanCommandToWire(context.installment()) as Record<string, unknown>;
      const without = (command: Record<string, unknown>, field: string) => Object.fromEntries(Object.entries(command).filter(([name]) => name !== field));
      const malformed: Array<[what: string, path: (reference: string) => string, body: string, contentType?: string]> = [
        ['a principal as a JSON number', codecPaths.deposit, JSON.stringify({ ...deposit, principalMinor: Number(deposit.principalMinor) })],
        ['a principal of "0"', codecPaths.deposit, JSON.stringify({ ...deposit, principalMinor: '0' })],
        ['a principal with decimals ("1000.00")', codecPaths.deposit, JSON.stringify({ ...deposit, principalMinor: '1000.00' })],
        ['a value date that is no calendar date (2026-02-30)', codecPaths.deposit, JSON.stringify({ ...deposit, valueDate: '2026-02-30' })],
        ['no customerReference', codecPaths.deposit, JSON.stringify(without(deposit, 'customerReference'))],
        ['neither numberOfDays nor maturityDate', codecPaths.deposit, JSON.stringify(without(without(deposit, 'numberOfDays'), 'maturityDate'))],
        ['a currency that is no ISO 4217 code (QQQ)', codecPaths.deposit, JSON.stringify({ ...deposit, currency: 'QQQ' })],
        ['a loan amount without its currency', codecPaths.installment, JSON.stringify(without(installment, 'currency'))],
        ['a body that is not JSON', codecPaths.deposit, '{"customerReference":'],
      ];
      const wrong: string[] = [];
      const consumed: string[] = [];
      const references: Array<[string, (reference: string) => string]> = [];
      for (const [what, path, body] of malformed) {
        const reference = randomUUID();
        const answer = await wire.send('POST', path(reference), body);
        if (answer.status !== 400 || errorOf(answer) !== 'BAD_REQUEST') wrong.push(`${what}: expected 400 {"error":"BAD_REQUEST",...}, got ${shown(answer)}`);
        const lookup = await wire.send('GET', path(reference));
        if (lookup.status !== 404 || (lookup.json as { status?: unknown } | undefined)?.status !== 'NotFound') consumed.push(`${what}: the lookup answered ${shown(lookup)}, not 404 {"status":"NotFound"}`);
        references.push([reference, path]);
      }
      const media = await wire.send('POST', codecPaths.deposit(randomUUID()), JSON.stringify(deposit), 'text/plain');
      if (media.status !== 415) wrong.push(`a command sent as text/plain: expected 415 UNSUPPORTED_MEDIA_TYPE, got ${shown(media)}`);
      const noRoute = await wire.send('GET', `${protocolPrefix}/no-such-route-${randomUUID().slice(0, 8)}`);
      if (noRoute.status !== 404 || errorOf(noRoute) !== 'NO_ROUTE') wrong.push(`a route the core does not have: expected 404 {"error":"NO_ROUTE",...}, got ${shown(noRoute)}`);
      const broken = [...wrong, ...consumed.map((line) => `consumed: ${line}`)];
      if (broken.length > 0) throw new RuleFailure(`${broken.length} answers break the protocol's errors:\n${broken.map((line) => `  - ${line}`).join('\n')}`);
      // The first malformed deposit's and loan's references were not consumed: a valid command under each executes.
      const depositReference = references.find(([, path]) => path === codecPaths.deposit)?.[0];
      const loanReference = references.find(([, path]) => path === codecPaths.installment)?.[0];
      for (const [reference, path, body] of [
        [depositReference, codecPaths.deposit, JSON.stringify(deposit)],
        [loanReference, codecPaths.installment, JSON.stringify(installment)],
      ] as const) {
        if (reference === undefined) continue;
        const answer = await wire.send('POST', path(reference), body);
        check(answer.status === 200 && (answer.json as { status?: unknown } | undefined)?.status === 'Executed', `a valid command under the reference of a malformed one: expected 200 Executed, got ${shown(answer)}`);
      }
    },
  },
];
