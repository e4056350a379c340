// An example core banking system in plain JavaScript: the remote core protocol
// (docs/core-protocol.md) over node:http, in front of the in-memory bank of bank.mjs. It serves the
// commands, lookups, fences, the directory, the business date and its advance, the events and the
// load side; not the read side (its routes answer 404 NO_ROUTE, which the API reads as "not
// served"). `coregate core conformance --core-url http://127.0.0.1:8091` checks it
// (docs/conformance.md).
//
//   node examples/core-js/server.mjs [--port 8091] [--host 127.0.0.1] [--business-date 2026-03-02] [--weekend FRIDAY,SATURDAY] [--break RULE]
//
// --weekend sets the bank's weekend days (Saturday and Sunday unless told; a first load's calendar
// sets it too).
// --break (or EXAMPLE_CORE_BREAK) breaks one rule on purpose, to see the kit fail: execute-twice,
// ignore-fence, refusal-family, lose-event, round-down, no-roll.
import { createServer } from 'node:http';
import { Bank, isCalendarDate, isCurrency, epochDay, WEEKDAYS } from './bank.mjs';

const BREAKS = ['execute-twice', 'ignore-fence', 'refusal-family', 'lose-event', 'round-down', 'no-roll'];
const args = Object.fromEntries(process.argv.slice(2).map((arg, i, all) => (arg.startsWith('--') ? [arg.slice(2), all[i + 1]] : [])).filter((pair) => pair.length > 0));
const broken = args.break ?? process.env.EXAMPLE_CORE_BREAK;
if (broken !== undefined && !BREAKS.includes(broken)) {
  console.error(`--break must be one of ${BREAKS.join(', ')}`);
  process.exit(2);
}
const weekend = args.weekend?.split(',').map((day) => day.trim().toUpperCase());
if (weekend !== undefined && (weekend.length >= 7 || !weekend.every((day) => WEEKDAYS.includes(day)))) {
  console.error('--weekend names weekdays, e.g. FRIDAY,SATURDAY');
  process.exit(2);
}
const bank = new Bank({ businessDate: args['business-date'] ?? new Date().toISOString().slice(0, 10), broken, weekend });

class BadRequest extends Error {}
const bad = (message) => {
  throw new BadRequest(message);
};

// ----- The wire's rules (docs/core-protocol.md "Conventions") -----
const REFERENCE = /^[A-Za-z0-9._:-]{1,128}$/;
const POSITIVE_MINOR = /^[1-9][0-9]{0,18}$/;
const RATE = /^[0-9]{1,3}(\.[0-9]{1,20})?(e-[0-9]{1,2})?$/;
const name = (body, field) => (typeof body[field] === 'string' && body[field].length >= 1 && body[field].length <= 128 ? body[field] : bad(`${field} must be a string of 1-128 characters`));
const optional = (body, field, check) => (body[field] === undefined ? undefined : check(body, field));
const date = (body, field) => (isCalendarDate(body[field]) ? body[field] : bad(`${field} must be a YYYY-MM-DD calendar date`));
const money = (body, field) => (typeof body[field] === 'string' && POSITIVE_MINOR.test(body[field]) ? body[field] : bad(`${field} must be minor units as a decimal string, > 0`));
const currency = (body, field) => (isCurrency(body[field]) ? body[field] : bad(`${field} must be an ISO 4217 currency`));
const integer = (min, max) => (body, field) => (Number.isInteger(body[field]) && body[field] >= min && body[field] <= max ? body[field] : bad(`${field} must be an integer from ${min} to ${max}`));

function depositCommand(body) {
  const command = {
    customerReference: name(body, 'customerReference'), productCode: name(body, 'productCode'), componentCode: name(body, 'componentCode'),
    principalMinor: money(body, 'principalMinor'), currency: currency(body, 'currency'),
    ratePercent: typeof body.ratePercent === 'string' && RATE.test(body.ratePercent) && Number(body.ratePercent) > 0 && Number(body.ratePercent) <= 100 ? body.ratePercent : bad('ratePercent must be a rate > 0 and at most 100, as a string'),
    numberOfDays: optional(body, 'numberOfDays', integer(1, 36_600)), maturityDate: optional(body, 'maturityDate', date), valueDate: date(body, 'valueDate'),
    sourceAccount: name(body, 'sourceAccount'), interestAccount: name(body, 'interestAccount'),
    description: body.description === null || (typeof body.description === 'string' && body.description.length <= 2048) ? body.description : bad('description must be a string or null'),
  };
  if (command.numberOfDays === undefined && command.maturityDate === undefined) bad('the command needs numberOfDays or maturityDate');
  if (command.maturityDate !== undefined && epochDay(command.maturityDate) <= epochDay(command.valueDate)) bad('maturityDate is not after valueDate');
  return command;
}

function loanCommand(body) {
  const command = {
    loanId: name(body, 'loanId'), sequence: integer(1, 1_000_000)(body, 'sequence'), loanType: name(body, 'loanType'), parameterType: name(body, 'parameterType'),
    maturityDate: optional(body, 'maturityDate', date), amountMinor: optional(body, 'amountMinor', money), currency: optional(body, 'currency', currency),
    paymentAccount: name(body, 'paymentAccount'), expenseAccount: name(body, 'expenseAccount'),
  };
  if ((command.amountMinor === undefined) !== (command.currency === undefined)) bad('amountMinor and currency come together');
  return command;
}

// Amounts leave as decimal strings of minor units, never as JSON numbers.
const wire = (value) => JSON.stringify(value, (_key, item) => (typeof item === 'bigint' ? item.toString() : item));
const notFound = [404, { status: 'NotFound' }];
const outcome = (answer) => (answer.status === 'NotFound' ? notFound : [200, answer]);

// ----- The routes: [method, path pattern, handler(params, body, query) → [status, body]] -----
const ROUTES = [
  ['POST', /^\/core\/v1\/term-deposit-constitutions\/([^/]+)$/, (ref, body) => [200, bank.constitute(ref, depositCommand(body))]],
  ['GET', /^\/core\/v1\/term-deposit-constitutions\/([^/]+)$/, (ref) => outcome(bank.lookup(ref, 'TD'))],
  ['POST', /^\/core\/v1\/loan-installment-executions\/([^/]+)$/, (ref, body) => [200, bank.payInstallment(ref, loanCommand(body))]],
  ['GET', /^\/core\/v1\/loan-installment-executions\/([^/]+)$/, (ref) => outcome(bank.lookup(ref, 'ML'))],
  ['POST', /^\/core\/v1\/fences\/([^/]+)$/, (ref) => (bank.fence(ref), [200, { status: 'Fenced' }])],
  ['GET', /^\/core\/v1\/term-deposits\/([^/]+)$/, (contract) => (bank.deposits.has(contract) ? [200, bank.deposits.get(contract)] : notFound)],
  ['GET', /^\/core\/v1\/directory\/users\/([^/]+)$/, (login) => (bank.users.has(login) ? [200, { status: bank.users.get(login) }] : notFound)],
  ['GET', /^\/core\/v1\/directory\/workstations\/([^/]+)$/, (id) => (bank.workstations.has(id) ? [200, { status: bank.workstations.get(id) }] : notFound)],
  ['GET', /^\/core\/v1\/business-date$/, () => [200, { businessDate: bank.businessDate }]],
  ['POST', /^\/core\/v1\/business-date\/advance$/, (_, body) => {
    const to = date(body, 'to');
    if (epochDay(to) < epochDay(bank.businessDate)) {
      return [409, { error: 'BUSINESS_DATE_BACKWARDS', message: `the business date is ${bank.businessDate} and never goes backwards`, businessDate: bank.businessDate, requested: to }];
    }
    if (epochDay(to) - epochDay(bank.businessDate) > 3660) bad('an advance spans at most 3660 days');
    return [200, bank.advance(to)];
  }],
  ['GET', /^\/core\/v1\/events$/, (_, __, query) => {
    const after = query.get('after') ?? '0';
    const limit = query.get('limit') ?? '100';
    if (!/^(0|[1-9][0-9]{0,14})$/.test(after) || !/^[1-9][0-9]{0,3}$/.test(limit) || Number(limit) > 1000) bad('after is a sequence, limit 1-1000');
    return [200, { events: bank.eventsAfter(Number(after), Number(limit)) }];
  }],
  ['POST', /^\/core\/v1\/data$/, (_, body) => {
    try {
      return [200, bank.load(body)];
    } catch (error) {
      if (error.field === undefined) throw error;
      return [400, { error: 'DATA_REFUSED', field: error.field, message: error.message }];
    }
  }],
  ['GET', /^\/health\/ready$/, () => [200, { status: 'ready' }]],
];

async function answer(request) {
  const url = new URL(request.url, 'http://core');
  const route = ROUTES.find(([method, pattern]) => method === request.method && pattern.test(url.pathname));
  if (!route) return [404, { error: 'NO_ROUTE', message: `No route ${request.method} ${url.pathname}` }];
  const [, pattern, handle] = route;
  const raw = pattern.exec(url.pathname)[1];
  let param;
  try {
    param = raw === undefined ? undefined : decodeURIComponent(raw);
  } catch {
    bad('the path has a bad percent-escape');
  }
  const isReference = /^\/core\/v1\/(term-deposit-constitutions|loan-installment-executions|fences)\//.test(url.pathname);
  if (isReference && !REFERENCE.test(param)) bad('the reference is 1-128 characters of A-Z a-z 0-9 . _ : -');
  if (param !== undefined && param.length > 128) bad('an identifier is at most 128 characters');
  let body = {};
  if (request.method === 'POST') {
    if (!/^application\/json\b/i.test(request.headers['content-type'] ?? '')) return [415, { error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Content-Type must be application/json' }];
    const limit = url.pathname === '/core/v1/data' ? 4 * 1024 * 1024 : 64 * 1024;
    const chunks = [];
    let size = 0;
    for await (const chunk of request) {
      size += chunk.length;
      if (size > limit) return [413, { error: 'PAYLOAD_TOO_LARGE', message: `The body exceeds ${limit} bytes` }];
      chunks.push(chunk);
    }
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      bad('The body is not valid JSON');
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) bad('The body is not a JSON object');
  }
  return handle(param, body, url.searchParams);
}

const server = createServer((request, response) => {
  answer(request)
    .catch((error) => (error instanceof BadRequest ? [400, { error: 'BAD_REQUEST', message: error.message }] : (console.error(error), [500, { error: 'INTERNAL_ERROR', message: 'Internal error; the core\'s log has the cause' }])))
    .then(([status, body]) => {
      response.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(wire(body));
    });
});
server.listen(Number(args.port ?? 8091), args.host ?? '127.0.0.1', () => {
  const { address, port } = server.address();
  console.log(`example core listening on http://${address}:${port}${broken ? ` (broken on purpose: ${broken})` : ''}`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.on('SIGINT', () => server.close(() => process.exit(0)));
