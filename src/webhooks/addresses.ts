// Which addresses a webhook may reach: the rules against server-side request forgery, as pure
// functions over parsed addresses (no DNS here; ./target.ts resolves and asks these). Loopback,
// private, shared (CGNAT), link-local (cloud metadata lives there), unique-local, multicast and
// reserved ranges are refused unless the operator's allow list (FAHEEM_WEBHOOK_ALLOW) names the
// host or a range holding the address. IPv6 forms that carry an IPv4 address (mapped, compatible,
// NAT64, 6to4) are judged by the IPv4 address they carry.
import { isIP } from 'node:net';

/** An IP address as its bytes (4 or 16). */
export interface IpAddress {
  readonly family: 4 | 6;
  readonly bytes: readonly number[];
}

/** A range of addresses: the first `bits` bits of `base`. */
export interface Cidr {
  readonly base: IpAddress;
  readonly bits: number;
}

/** What FAHEEM_WEBHOOK_ALLOW lets through: host names (any address they resolve to) and ranges. */
export interface WebhookAllowList {
  /** Lower-case host names, exactly as a URL's host is written. */
  readonly hosts: readonly string[];
  readonly ranges: readonly Cidr[];
}

/** Nothing beyond the public internet. */
export const NO_EXTRA_ALLOWED: WebhookAllowList = { hosts: [], ranges: [] };

/** The bytes of an address `net.isIP` accepts (IPv6 with a zone, `fe80::1%eth0`, without the zone); undefined otherwise. */
export function parseIp(text: string): IpAddress | undefined {
  const plain = text.replace(/^\[(.*)\]$/, '$1').replace(/%.*$/, '');
  const family = isIP(plain);
  if (family === 4) return { family: 4, bytes: plain.split('.').map(Number) };
  if (family !== 6) return undefined;
  let head = plain;
  let tail: number[] = [];
  // A trailing dotted IPv4 address (`::ffff:127.0.0.1`) is the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(plain);
  if (dotted) {
    tail = dotted[1]!.split('.').map(Number);
    head = plain.slice(0, -dotted[1]!.length);
    if (head.endsWith(':') && !head.endsWith('::')) head = head.slice(0, -1);
  }
  const groupsOf = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const [left, right] = head.includes('::') ? head.split('::') : [head, undefined];
  const l = groupsOf(left!);
  const r = right === undefined ? [] : groupsOf(right);
  const missing = 8 - tail.length / 2 - l.length - r.length;
  const groups = right === undefined ? l : [...l, ...new Array<number>(missing).fill(0), ...r];
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]).concat(tail);
  return bytes.length === 16 ? { family: 6, bytes } : undefined;
}

/** `a.b.c.d/n`, `x::y/n`, or a bare address (all of its bits); undefined when not a range. */
export function parseCidr(text: string): Cidr | undefined {
  const [addr, bitsText, extra] = text.trim().split('/');
  if (extra !== undefined || addr === undefined) return undefined;
  const base = parseIp(addr);
  if (!base) return undefined;
  const max = base.family === 4 ? 32 : 128;
  if (bitsText === undefined) return { base, bits: max };
  if (!/^\d{1,3}$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  return bits <= max ? { base, bits } : undefined;
}

/** Whether `ip` lies in `range` (an IPv4 range holds the IPv4 address an IPv6 form carries, too). */
export function inRange(ip: IpAddress, range: Cidr): boolean {
  const candidate = ip.family === range.base.family ? ip : range.base.family === 4 ? embeddedIpv4(ip) : undefined;
  if (!candidate) return false;
  for (let bit = 0; bit < range.bits; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if ((candidate.bytes[byte]! & mask) !== (range.base.bytes[byte]! & mask)) return false;
  }
  return true;
}

function range(text: string): Cidr {
  return parseCidr(text)!;
}

/** The ranges refused by default, with why (the reason goes into the refusal's message). */
const BLOCKED: readonly { range: Cidr; why: string }[] = [
  { range: range('0.0.0.0/8'), why: '"this network"' },
  { range: range('10.0.0.0/8'), why: 'private' },
  { range: range('100.64.0.0/10'), why: 'shared (carrier-grade NAT; cloud metadata on some providers)' },
  { range: range('127.0.0.0/8'), why: 'loopback' },
  { range: range('169.254.0.0/16'), why: 'link-local (cloud metadata)' },
  { range: range('172.16.0.0/12'), why: 'private' },
  { range: range('192.0.0.0/24'), why: 'IETF protocol assignments' },
  { range: range('192.0.2.0/24'), why: 'documentation' },
  { range: range('192.88.99.0/24'), why: '6to4 relay' },
  { range: range('192.168.0.0/16'), why: 'private' },
  { range: range('198.18.0.0/15'), why: 'benchmarking' },
  { range: range('198.51.100.0/24'), why: 'documentation' },
  { range: range('203.0.113.0/24'), why: 'documentation' },
  { range: range('224.0.0.0/4'), why: 'multicast' },
  { range: range('240.0.0.0/4'), why: 'reserved' },
  { range: range('::/128'), why: 'unspecified' },
  { range: range('::1/128'), why: 'loopback' },
  { range: range('64:ff9b:1::/48'), why: 'local-use NAT64' },
  { range: range('100::/64'), why: 'discard' },
  { range: range('2001::/23'), why: 'IETF protocol assignments (Teredo, ORCHID, …)' },
  { range: range('2001:db8::/32'), why: 'documentation' },
  { range: range('fc00::/7'), why: 'unique-local (cloud metadata on some providers)' },
  { range: range('fe80::/10'), why: 'link-local' },
  { range: range('fec0::/10'), why: 'site-local' },
  { range: range('ff00::/8'), why: 'multicast' },
];

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach it: mapped
 * (`::ffff:a.b.c.d`), compatible (`::a.b.c.d`), NAT64 (`64:ff9b::/96`) or 6to4
 * (`2002:AABB:CCDD::/16`). An IPv4 address is itself.
 */
export function embeddedIpv4(ip: IpAddress): IpAddress | undefined {
  if (ip.family === 4) return ip;
  const b = ip.bytes;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number): IpAddress => ({ family: 4, bytes: b.slice(at, at + 4) });
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12); // mapped
  if (zeros(0, 12) && !zeros(12, 14)) return v4(12); // compatible (deprecated); ::, ::1 are judged as IPv6
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4(12); // NAT64 well-known prefix
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2); // 6to4
  return undefined;
}

/** Why `ip` is refused by default ("loopback", …), or undefined for a public address. */
export function blockedReason(ip: IpAddress): string | undefined {
  const v4 = embeddedIpv4(ip);
  for (const { range: r, why } of BLOCKED) {
    if (r.base.family === 6 && ip.family === 6 && inRange(ip, r)) return why;
    if (r.base.family === 4 && v4 && inRange(v4, r)) return why;
  }
  return undefined;
}

/** The text form of an address, for messages (IPv4 dotted; IPv6 as groups, not shortened). */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return ip.bytes.join('.');
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip.bytes[i]! << 8) | ip.bytes[i + 1]!).toString(16));
  return groups.join(':');
}

/**
 * FAHEEM_WEBHOOK_ALLOW: comma-separated host names, addresses and CIDR ranges (`127.0.0.1`,
 * `10.0.0.0/8`, `hooks.internal`, `::1`). Throws with the entry that is neither.
 */
export function parseAllowList(text: string | undefined): WebhookAllowList {
  const hosts: string[] = [];
  const ranges: Cidr[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim();
    if (!entry) continue;
    const cidr = parseCidr(entry);
    if (cidr) ranges.push(cidr);
    else if (/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*\.?$/.test(entry) && !entry.includes('/'))
      hosts.push(entry.toLowerCase().replace(/\.$/, ''));
    else throw new Error(`${JSON.stringify(entry)} is neither a host name, an IP address nor a CIDR range (a.b.c.d/n, x::y/n)`);
  }
  return { hosts, ranges };
}

/** Whether the allow list names this host (a URL's hostname, lower case, IPv6 in brackets or not). */
export function hostAllowed(host: string, allow: WebhookAllowList): boolean {
  const name = host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return allow.hosts.includes(name);
}

/**
 * Why a webhook may not connect to `ip`, or undefined when it may: a public address, an address in
 * one of the allow list's ranges, or any address of a host the list names (`hostListed`).
 */
export function addressRefusal(ip: IpAddress, allow: WebhookAllowList, hostListed = false): string | undefined {
  const why = blockedReason(ip);
  if (why === undefined || hostListed) return undefined;
  if (allow.ranges.some((r) => inRange(ip, r))) return undefined;
  return `${formatIp(ip)} is a ${why} address (FAHEEM_WEBHOOK_ALLOW may list it)`;
}
