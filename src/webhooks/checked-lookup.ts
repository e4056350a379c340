/**
 * Name resolution for webhook deliveries: every address a host name resolves to is checked
 * against the target policy (target-address.ts), and the socket connects to the addresses that
 * were checked, because the socket asks this lookup and nothing else. A check before the request
 * followed by the socket's own resolution would leave a DNS rebind between the two (a name that
 * answers a public address to the check and 127.0.0.1 to the connect); here there is one
 * resolution. One forbidden address refuses the name entirely: a name that mixes a public and a
 * private address is either a mistake or an attempt to reach the private one.
 */
import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOneOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { forbiddenRange, type AddressRange, type TargetPolicy } from './target-address.js';

/** Every address of a host name (dns.lookup with all: true); injected by the tests. */
export type ResolveHost = (hostname: string) => Promise<LookupAddress[]>;

/** The system's resolver (getaddrinfo: /etc/hosts, then DNS), every address in its order. */
export const systemResolveHost: ResolveHost = (hostname) => systemLookup(hostname, { all: true, verbatim: true });

/** A delivery refused because its target is not allowed; the detail is for the operator's log only. */
export class ForbiddenTarget extends Error {
  override name = 'ForbiddenTarget';
  readonly code = 'COREGATE_FORBIDDEN_TARGET';

  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: AddressRange,
  ) {
    super(host === address ? `${address} is a ${range} address, not a webhook target` : `${host} resolves to ${address}, a ${range} address, not a webhook target`);
  }
}

/** A lookup for net.connect / tls.connect (undici's `connect.lookup`) that answers only checked addresses. */
export function checkedLookup(resolveHost: ResolveHost, policy: TargetPolicy): LookupFunction {
  return (hostname, options, callback) => {
    resolveHost(hostname).then(
      (addresses) => {
        for (const { address } of addresses) {
          const range = forbiddenRange(address, policy);
          if (range !== undefined) return callback(new ForbiddenTarget(hostname, address, range), '', 0);
        }
        const family = (options as LookupOneOptions).family;
        const usable = family === 4 || family === 6 ? addresses.filter((candidate) => candidate.family === family) : addresses;
        const [first] = usable;
        if (first === undefined) {
          return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND', hostname }), '', 0);
        }
        // Node's connect asks for every address when it tries them in turn (autoSelectFamily).
        if ((options as { all?: boolean }).all) return callback(null, usable);
        return callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
