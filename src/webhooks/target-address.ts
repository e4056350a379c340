/**
 * Which network addresses a webhook may be sent to (docs/webhooks.md, docs/security.md: SSRF).
 *
 * An endpoint's URL is chosen by an operator or a data file, and the client then reads how each
 * attempt ended. Without this rule a URL naming 127.0.0.1:6379, the cloud's metadata service or a
 * host of the bank's own network would turn the deliverer into a request forger and the list of
 * deliveries into a port scanner. So by default only public unicast addresses are targets;
 * `--webhook-allow-private` adds loopback and the private networks (RFC 1918, IPv6 ULA, CGNAT),
 * for a sandbox whose receivers run on the same machine or network. Link-local addresses (where
 * the metadata services live), the unspecified address, multicast and reserved ranges are never
 * targets: no receiver lives there, whatever the setting.
 *
 * IPv6 forms that carry an IPv4 address (IPv4-mapped `::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`,
 * 6to4 `2002::/16`) are judged by the IPv4 address they carry.
 */
import { isIP } from 'node:net';

/** Where webhooks may go; the same for registration and delivery. */
export interface TargetPolicy {
  /** Loopback, RFC 1918, IPv6 ULA and CGNAT addresses are targets too (a sandbox on one machine). */
  allowPrivate: boolean;
}

/** The kind of address that is not public unicast. */
export type AddressRange = 'loopback' | 'private' | 'carrier-grade NAT' | 'link-local' | 'unspecified' | 'multicast' | 'reserved';

/** The ranges `allowPrivate` opens: the places a receiver of a sandbox can be. */
const privateNetworkRanges: ReadonlySet<AddressRange> = new Set<AddressRange>(['loopback', 'private', 'carrier-grade NAT']);

/** IPv4 ranges that are not public unicast: [first address, prefix length, kind]. */
const ipv4Ranges: ReadonlyArray<readonly [string, number, AddressRange]> = [
  ['0.0.0.0', 8, 'unspecified'], // "this network": 0.0.0.0 connects to the host itself
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'reserved'], // IETF protocol assignments
  ['192.0.2.0', 24, 'reserved'], // documentation
  ['192.88.99.0', 24, 'reserved'], // 6to4 relay anycast (deprecated)
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'reserved'], // benchmarking
  ['198.51.100.0', 24, 'reserved'], // documentation
  ['203.0.113.0', 24, 'reserved'], // documentation
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'], // future use, and the broadcast address 255.255.255.255
];

/** The kind of an IP address (IPv4 or IPv6 text), or `public` for a public unicast address. */
export function addressRange(address: string): AddressRange | 'public' {
  const version = isIP(withoutZone(address));
  if (version === 4) return ipv4Range(ipv4Number(address));
  if (version === 6) return ipv6Range(ipv6Groups(withoutZone(address)));
  // Not an address at all: nothing to connect to.
  return 'reserved';
}

/** The kind of the address when the policy forbids it as a target; undefined when it is allowed. */
export function forbiddenRange(address: string, policy: TargetPolicy): AddressRange | undefined {
  const range = addressRange(address);
  if (range === 'public') return undefined;
  if (policy.allowPrivate && privateNetworkRanges.has(range)) return undefined;
  return range;
}

/** Whether `--webhook-allow-private` would open the range (the refusal's message says so). */
export function isPrivateNetworkRange(range: AddressRange): boolean {
  return privateNetworkRanges.has(range);
}

/**
 * The forbidden kind of a URL's host when the host is itself an address (the WHATWG parser has
 * already turned `2130706433`, `0x7f.1` and `127.1` into `127.0.0.1`) or a name that always means
 * this machine (`localhost`, `*.localhost`, RFC 6761); undefined for any other name, which is
 * checked when it is resolved.
 */
export function forbiddenHostRange(hostname: string, policy: TargetPolicy): AddressRange | undefined {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(withoutZone(host)) !== 0) return forbiddenRange(host, policy);
  const name = host.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return policy.allowPrivate ? undefined : 'loopback';
  return undefined;
}

function ipv4Range(value: number): AddressRange | 'public' {
  for (const [first, bits, range] of ipv4Ranges) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if (((value & mask) >>> 0) === ipv4Number(first)) return range;
  }
  return 'public';
}

function ipv6Range(groups: readonly number[]): AddressRange | 'public' {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = ((g6 << 16) | g7) >>> 0;
  const zeroUpTo = (count: number) => groups.slice(0, count).every((group) => group === 0);
  if (zeroUpTo(8)) return 'unspecified';
  if (zeroUpTo(7) && g7 === 1) return 'loopback';
  if (zeroUpTo(5) && g5 === 0xffff) return ipv4Range(embedded); // IPv4-mapped
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return ipv4Range(embedded); // NAT64
  if (g0 === 0x2002) return ipv4Range(((g1 << 16) | g2) >>> 0); // 6to4
  if (g0 >= 0xff00) return 'multicast';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'private'; // site-local (deprecated)
  if ((g0 & 0xfe00) === 0xfc00) return 'private'; // unique local (ULA)
  // Global unicast is 2000::/3; the rest (IPv4-compatible ::/96, discard 100::/64, ...) is reserved.
  if ((g0 & 0xe000) !== 0x2000) return 'reserved';
  if (g0 === 0x2001 && g1 < 0x0200) return 'reserved'; // IETF protocol assignments, Teredo included
  if (g0 === 0x2001 && g1 === 0x0db8) return 'reserved'; // documentation
  if (g0 === 0x3fff && g1 < 0x1000) return 'reserved'; // documentation (3fff::/20)
  return 'public';
}

function withoutZone(address: string): string {
  const percent = address.indexOf('%');
  return percent < 0 ? address : address.slice(0, percent);
}

function ipv4Number(address: string): number {
  return address.split('.').reduce((value, part) => ((value << 8) | Number(part)) >>> 0, 0);
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail converted). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const value = ipv4Number(tail);
    text = `${text.slice(0, lastColon + 1)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const before = parse(head);
  const after = rest === undefined ? [] : parse(rest);
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}
