/**
 * The sandbox data file (docs/sandbox.md, "The data file"): its schema, and a parser whose errors
 * name the field. The project may add fields (signatureAlgorithm, ...) but never renames the
 * documented ones.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { isCalendarDate } from '../core/calendar-date.js';
import { currencyExponent } from '../core/currencies.js';
import { parseAmount } from '../core/money.js';
import { clientMetadataProblem, realmAlgorithmProblem, realmProfiles } from '../auth/client-metadata.js';
import { tokenEndpointAuthMethods, type ClientAuthentication } from '../core/client-registration.js';
import { realmDefaults, signingAlgorithms } from '../auth/signing-algorithms.js';

const Identifier = (description: string) => Type.String({ minLength: 1, maxLength: 128, description });
const IsoDate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'YYYY-MM-DD' });
const Status = Type.Union([Type.Literal('Active'), Type.Literal('Disabled'), Type.Literal('Blocked')]);
const Amount = Type.Number({ minimum: 0 });
const CurrencyCode = Type.String({ pattern: '^[A-Z]{3}$' });
const ScopeToken = Type.String({ pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$', description: 'RFC 6749 scope-token' });

/** A public JWK (RFC 7517): its members are checked by the rules of docs/auth.md, "Client metadata and the fapi2 profile" (client-metadata.ts). */
const PublicJwk = Type.Object({ kty: Type.String({ minLength: 1, maxLength: 16 }) }, { additionalProperties: true });

export const SandboxClient = Type.Object({
  clientId: Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' }),
  /** Required for the secret methods; absent for private_key_jwt and tls_client_auth (docs/auth.md, "Client metadata and the fapi2 profile"). */
  secret: Type.Optional(Type.String({ minLength: 16, maxLength: 512 })),
  tokenEndpointAuthMethod: Type.Optional(Type.Union(tokenEndpointAuthMethods.map((method) => Type.Literal(method)))),
  jwks: Type.Optional(Type.Object({ keys: Type.Array(PublicJwk, { maxItems: 16 }) })),
  tlsClientAuthSubjectDn: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })),
  dpopBoundAccessTokens: Type.Optional(Type.Boolean()),
  tlsClientCertificateBoundAccessTokens: Type.Optional(Type.Boolean()),
  enabled: Type.Optional(Type.Boolean({ default: true })),
  grants: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  scopes: Type.Array(ScopeToken),
  technicalUser: Type.Optional(Identifier('login of the technical user')),
  defaultWorkstation: Type.Optional(Identifier('default workstation id')),
});

export const SandboxRealm = Type.Object({
  name: Type.String({ pattern: '^[A-Za-z0-9._-]{1,64}$' }),
  accessTokenLifespanSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 86_400 })),
  audience: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  signatureAlgorithm: Type.Optional(Type.Union(signingAlgorithms.map((alg) => Type.Literal(alg)))),
  /** `fapi2`: strong client authentication and sender-constrained tokens only (docs/auth.md, "Client metadata and the fapi2 profile"). */
  profile: Type.Optional(Type.Union(realmProfiles.map((profile) => Type.Literal(profile)))),
  /** DPoP proofs at the token endpoint need a server nonce (RFC 9449 §8). */
  dpopNonce: Type.Optional(Type.Boolean()),
  clients: Type.Optional(Type.Array(SandboxClient)),
});

const Charges = Type.Object({
  fixedFee: Amount,
  commissionRate: Type.Number({ minimum: 0 }),
  minimumCommission: Amount,
  taxRate: Type.Number({ minimum: 0 }),
});

const Installment = Type.Object({
  sequence: Type.Integer({ minimum: 1 }),
  dueDate: IsoDate,
  amount: Amount,
  amountPaid: Type.Optional(Amount),
});

/** A webhook endpoint of a client (docs/webhooks.md, "Registering endpoints"); loaded once, never overwritten. */
export const SandboxWebhook = Type.Object({
  realm: Type.String({ minLength: 1, maxLength: 64 }),
  clientId: Type.String({ minLength: 1, maxLength: 128 }),
  url: Type.String({ minLength: 1, maxLength: 2048, pattern: '^https?://', description: 'absolute http(s) URL' }),
  secret: Type.Optional(Type.String({ pattern: '^whsec_', maxLength: 200, description: 'whsec_ and base64; generated when absent' })),
  eventTypes: Type.Optional(
    Type.Array(Type.Union(['operation.executed', 'operation.rejected', 'termDeposit.matured', 'loanInstallment.overdue'].map((t) => Type.Literal(t)))),
  ),
});

export const SandboxDataFile = Type.Object({
  businessDate: Type.Optional(IsoDate),
  calendar: Type.Optional(
    Type.Object({
      weekend: Type.Optional(
        Type.Array(
          Type.Union(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'].map((d) => Type.Literal(d))),
        ),
      ),
      holidays: Type.Optional(Type.Array(IsoDate)),
    }),
  ),
  realms: Type.Optional(Type.Array(SandboxRealm)),
  users: Type.Optional(Type.Array(Type.Object({ login: Identifier('user login'), status: Status }))),
  workstations: Type.Optional(Type.Array(Type.Object({ id: Identifier('workstation id'), status: Status }))),
  customers: Type.Optional(
    Type.Array(Type.Object({ customerReference: Identifier('customer number'), name: Type.Optional(Type.String()), status: Status })),
  ),
  accounts: Type.Optional(
    Type.Array(
      Type.Object({
        accountNumber: Identifier('account number'),
        customerReference: Identifier('owner'),
        currency: CurrencyCode,
        balance: Amount,
        status: Status,
      }),
    ),
  ),
  termDepositProducts: Type.Optional(
    Type.Array(
      Type.Object({
        productCode: Identifier('product code'),
        componentCode: Identifier('component code'),
        active: Type.Boolean(),
        currencies: Type.Array(CurrencyCode),
        minAmount: Amount,
        maxAmount: Amount,
        minDays: Type.Integer({ minimum: 1 }),
        maxDays: Type.Integer({ minimum: 1 }),
        dayCount: Type.Union([Type.Literal('ACT/360'), Type.Literal('ACT/365')]),
      }),
    ),
  ),
  merchandisingLoans: Type.Optional(
    Type.Array(
      Type.Object({
        merchandisingLoanId: Identifier('facility id'),
        customerReference: Identifier('facility customer'),
        merchandisingLoanType: Type.String({ minLength: 1 }),
        merchandisingLoanFacilityParameterType: Type.String({ minLength: 1 }),
        currency: CurrencyCode,
        approvedLimit: Amount,
        status: Type.String({ minLength: 1 }),
        finalMaturityDate: IsoDate,
        charges: Charges,
        installments: Type.Array(Installment),
      }),
    ),
  ),
  webhooks: Type.Optional(Type.Array(SandboxWebhook)),
});

export type SandboxData = Static<typeof SandboxDataFile>;
export type SandboxRealmData = Static<typeof SandboxRealm>;
export type SandboxClientData = Static<typeof SandboxClient>;
export type SandboxWebhookData = Static<typeof SandboxWebhook>;

const compiled = TypeCompiler.Compile(SandboxDataFile);

export class DataFileError extends Error {
  constructor(
    readonly file: string,
    readonly field: string,
    problem: string,
  ) {
    super(field === '' ? `data file ${file}: ${problem}` : `${file}: ${field}: ${problem}`);
    this.name = 'DataFileError';
  }
}

/**
 * `named` says where the file's name came from, for a file that does not exist: the flag and
 * variable of the command that read it (`coregate serve`'s by default).
 */
export function readSandboxFile(file: string, named = '--data / COREGATE_DATA'): SandboxData {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new DataFileError(file, '', unreadable(file, error as NodeJS.ErrnoException, named));
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new DataFileError(file, '', `is not valid JSON (${(error as Error).message})`);
  }
  return parseSandboxData(value, file);
}

/** Why the file cannot be read, and what to do, in words (issue 12: "cannot be read (ENOENT)"). */
function unreadable(file: string, error: NodeJS.ErrnoException, named: string): string {
  const where = `(looked for ${resolve(file)})`;
  switch (error.code) {
    case 'ENOENT':
      return `does not exist ${where}: check ${named}; the demo data is demo/sandbox.json`;
    case 'EACCES':
    case 'EPERM':
      return `cannot be read: permission denied ${where}`;
    case 'EISDIR':
      return `is a directory, not a JSON file ${where}`;
    default:
      return `cannot be read (${error.code ?? error.message}) ${where}`;
  }
}

/** Checks the shape, then the rules a schema cannot say (real dates, unique ids). */
export function parseSandboxData(value: unknown, file = 'data file'): SandboxData {
  const first = compiled.Errors(value).First();
  if (first) throw new DataFileError(file, toFieldName(first.path), describe(first.schema, first.message));
  const data = value as SandboxData;
  checkDates(data, file);
  checkUnique(file, 'realms', (data.realms ?? []).map((r) => r.name), 'name');
  (data.realms ?? []).forEach((realm, index) =>
    checkUnique(file, `realms[${index}].clients`, (realm.clients ?? []).map((c) => c.clientId), 'clientId'),
  );
  checkClientMetadata(data, file);
  checkUnique(file, 'users', (data.users ?? []).map((u) => u.login), 'login');
  checkUnique(file, 'workstations', (data.workstations ?? []).map((w) => w.id), 'id');
  checkUnique(file, 'customers', (data.customers ?? []).map((c) => c.customerReference), 'customerReference');
  checkUnique(file, 'accounts', (data.accounts ?? []).map((a) => a.accountNumber), 'accountNumber');
  checkUnique(file, 'merchandisingLoans', (data.merchandisingLoans ?? []).map((l) => l.merchandisingLoanId), 'merchandisingLoanId');
  checkMoneyAndOwners(data, file);
  return data;
}

function checkDates(data: SandboxData, file: string): void {
  const dates: Array<[string, string | undefined]> = [['businessDate', data.businessDate]];
  (data.calendar?.holidays ?? []).forEach((d, i) => dates.push([`calendar.holidays[${i}]`, d]));
  (data.merchandisingLoans ?? []).forEach((loan, i) => {
    dates.push([`merchandisingLoans[${i}].finalMaturityDate`, loan.finalMaturityDate]);
    loan.installments.forEach((inst, j) => dates.push([`merchandisingLoans[${i}].installments[${j}].dueDate`, inst.dueDate]));
  });
  for (const [field, date] of dates) {
    if (date !== undefined && !isCalendarDate(date)) throw new DataFileError(file, field, `"${date}" is not a calendar date`);
  }
}

/** Amounts must be exact in their currency's minor units; accounts and loans need a known customer. */
function checkMoneyAndOwners(data: SandboxData, file: string): void {
  const customers = new Set((data.customers ?? []).map((c) => c.customerReference));
  const exact = (field: string, amount: number, currency: string) => {
    if (currencyExponent(currency) === undefined) throw new DataFileError(file, field, `"${currency}" is not an active ISO 4217 currency`);
    if (amount !== 0 && !parseAmount(amount, currency).ok) {
      throw new DataFileError(file, field, `${amount} is not an exact amount of ${currency} (ISO 4217 minor units, at most 15 digits)`);
    }
  };
  (data.accounts ?? []).forEach((account, i) => {
    exact(`accounts[${i}].balance`, account.balance, account.currency);
    if (!customers.has(account.customerReference)) {
      throw new DataFileError(file, `accounts[${i}].customerReference`, `customer "${account.customerReference}" is not in customers`);
    }
  });
  (data.termDepositProducts ?? []).forEach((product, i) => {
    product.currencies.forEach((currency, j) => {
      if (currencyExponent(currency) === undefined) {
        throw new DataFileError(file, `termDepositProducts[${i}].currencies[${j}]`, `"${currency}" is not an active ISO 4217 currency`);
      }
      exact(`termDepositProducts[${i}].minAmount`, product.minAmount, currency);
      exact(`termDepositProducts[${i}].maxAmount`, product.maxAmount, currency);
    });
    if (product.minAmount > product.maxAmount) throw new DataFileError(file, `termDepositProducts[${i}].minAmount`, 'is above maxAmount');
    if (product.minDays > product.maxDays) throw new DataFileError(file, `termDepositProducts[${i}].minDays`, 'is above maxDays');
  });
  (data.merchandisingLoans ?? []).forEach((loan, i) => {
    if (!customers.has(loan.customerReference)) {
      throw new DataFileError(file, `merchandisingLoans[${i}].customerReference`, `customer "${loan.customerReference}" is not in customers`);
    }
    exact(`merchandisingLoans[${i}].approvedLimit`, loan.approvedLimit, loan.currency);
    exact(`merchandisingLoans[${i}].charges.fixedFee`, loan.charges.fixedFee, loan.currency);
    exact(`merchandisingLoans[${i}].charges.minimumCommission`, loan.charges.minimumCommission, loan.currency);
    loan.installments.forEach((installment, j) => {
      exact(`merchandisingLoans[${i}].installments[${j}].amount`, installment.amount, loan.currency);
      if (installment.amountPaid !== undefined) exact(`merchandisingLoans[${i}].installments[${j}].amountPaid`, installment.amountPaid, loan.currency);
    });
    checkUnique(file, `merchandisingLoans[${i}].installments`, loan.installments.map((inst) => String(inst.sequence)), 'sequence');
  });
}

/** A data file client's authentication and binding (docs/auth.md, "Client metadata and the fapi2 profile"): the file's names, as the store keeps them. */
export function clientAuthenticationOf(client: SandboxClientData): ClientAuthentication {
  return {
    method: client.tokenEndpointAuthMethod ?? 'client_secret_basic',
    jwks: client.jwks ?? null,
    tlsSubjectDn: client.tlsClientAuthSubjectDn ?? null,
    dpopBound: client.dpopBoundAccessTokens ?? false,
    certificateBound: client.tlsClientCertificateBoundAccessTokens ?? false,
  };
}

/** The algorithm a realm of the file signs with: its own, else PS256 in a `fapi2` realm, else the default. */
export function realmSigningAlgorithm(realm: SandboxRealmData): string {
  return realm.signatureAlgorithm ?? (realm.profile === 'fapi2' ? 'PS256' : realmDefaults.signingAlg);
}

/** Each client's one authentication method, and a `fapi2` realm's rules, named by field (docs/auth.md, "Client metadata and the fapi2 profile"). */
function checkClientMetadata(data: SandboxData, file: string): void {
  (data.realms ?? []).forEach((realm, i) => {
    const profile = realm.profile ?? null;
    const algorithm = realmAlgorithmProblem(profile, realmSigningAlgorithm(realm));
    if (algorithm) throw new DataFileError(file, `realms[${i}].${algorithm.field}`, algorithm.message);
    (realm.clients ?? []).forEach((client, j) => {
      const problem = clientMetadataProblem(profile, clientAuthenticationOf(client), client.secret !== undefined);
      if (problem) throw new DataFileError(file, `realms[${i}].clients[${j}].${problem.field}`, problem.message);
    });
  });
}

function checkUnique(file: string, section: string, ids: string[], key: string): void {
  const seen = new Set<string>();
  ids.forEach((id, index) => {
    if (seen.has(id)) throw new DataFileError(file, `${section}[${index}].${key}`, `duplicate value "${id}"`);
    seen.add(id);
  });
}

/** `/realms/0/clients/1/secret` → `realms[0].clients[1].secret`. */
function toFieldName(pointer: string): string {
  return pointer
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((name, part) => (/^\d+$/.test(part) ? `${name}[${part}]` : name === '' ? part : `${name}.${part}`), '');
}

function describe(schema: TSchema, message: string): string {
  return schema.description ? `${message} (${schema.description})` : message;
}
