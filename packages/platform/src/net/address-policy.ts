import { BlockList, isIP, isIPv4, isIPv6 } from 'node:net';

/**
 * SSRF guard: decides whether Switchyard may open a connection to an address. The admin API uses
 * checkHost on webhook URLs (literal IPs and well-known local names); the delivery service uses
 * checkAddress on every address a hostname resolves to, right before connecting.
 */
export type AddressClass = 'loopback' | 'private' | 'link-local' | 'metadata' | 'unspecified' | 'multicast' | 'reserved' | 'public';

export type AddressVerdict =
  | { allowed: true; address: string; class: AddressClass }
  | { allowed: false; address: string; class: AddressClass; reason: 'blocked_address' };

type Family = 'ipv4' | 'ipv6';
type Target = { address: string; family: Family };

// First match wins, so the narrow ranges (metadata inside link-local or ULA space) come first.
const v4Ranges: ReadonlyArray<readonly [AddressClass, readonly string[]]> = [
  ['unspecified', ['0.0.0.0/8']],
  ['loopback', ['127.0.0.0/8']],
  ['metadata', ['169.254.169.254/32', '169.254.170.2/32']],
  ['link-local', ['169.254.0.0/16']],
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10']],
  ['multicast', ['224.0.0.0/4']],
  // 240/4 includes the limited broadcast address 255.255.255.255.
  ['reserved', ['240.0.0.0/4', '192.0.0.0/24', '192.0.2.0/24', '198.18.0.0/15', '198.51.100.0/24', '203.0.113.0/24']],
];

const v6Ranges: ReadonlyArray<readonly [AddressClass, readonly string[]]> = [
  ['unspecified', ['::/128']],
  ['loopback', ['::1/128']],
  ['metadata', ['fd00:ec2::254/128']],
  // fec0::/10 is the deprecated site-local range, still routed internally by some networks.
  ['private', ['fc00::/7', 'fec0::/10']],
  ['link-local', ['fe80::/10']],
  ['multicast', ['ff00::/8']],
  // 6to4 (2002::/16), IPv4-compatible (::/96) and local-use NAT64 (64:ff9b:1::/48) can all carry an
  // internal IPv4 address; nothing legitimate needs them as a webhook target.
  ['reserved', ['2001:db8::/32', '2002::/16', '::/96', '64:ff9b:1::/48']],
];

function buildTable(family: Family, ranges: typeof v4Ranges): Array<readonly [AddressClass, BlockList]> {
  return ranges.map(([cls, cidrs]) => {
    const list = new BlockList();
    for (const cidr of cidrs) addCidr(list, cidr, family);
    return [cls, list] as const;
  });
}

const tables: Record<Family, Array<readonly [AddressClass, BlockList]>> = { ipv4: buildTable('ipv4', v4Ranges), ipv6: buildTable('ipv6', v6Ranges) };

/** Classifies a literal IPv4 or IPv6 address; IPv4-mapped and NAT64 (64:ff9b::/96) addresses take the class of the IPv4 address they carry. */
export function classifyAddress(ip: string): AddressClass {
  return classifyTarget(targetsOf(ip)[0]!);
}

function classifyTarget(target: Target): AddressClass {
  for (const [cls, list] of tables[target.family]) if (list.check(target.address, target.family)) return cls;
  return 'public';
}

/**
 * The addresses to judge for `ip`, the one that decides its class first. An IPv4-mapped address
 * reaches the IPv4 host, so only the IPv4 form counts; a NAT64 address is also matched as itself
 * against the allow-list, since an operator may have listed the NAT64 range.
 */
function targetsOf(ip: string): Target[] {
  if (isIPv4(ip)) return [{ address: ip, family: 'ipv4' }];
  if (!isIPv6(ip)) throw new TypeError(`not an IP address: ${JSON.stringify(ip)}`);
  // dns.lookup can return link-local addresses with a zone (fe80::1%eth0); the zone doesn't change the class.
  const address = ip.replace(/%.*$/, '');
  const embedded = embeddedIPv4(address);
  if (embedded?.via === 'mapped') return [{ address: embedded.address, family: 'ipv4' }];
  if (embedded?.via === 'nat64') return [{ address: embedded.address, family: 'ipv4' }, { address, family: 'ipv6' }];
  return [{ address, family: 'ipv6' }];
}

/** The IPv4 address inside an IPv4-mapped (::ffff:0:0/96) or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIPv4(ip6: string): { address: string; via: 'mapped' | 'nat64' } | undefined {
  const h = hextets(ip6);
  const via = h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff ? 'mapped'
    : h[0] === 0x64 && h[1] === 0xff9b && h.slice(2, 6).every((x) => x === 0) ? 'nat64'
    : undefined;
  if (via === undefined) return undefined;
  return { address: `${h[6]! >> 8}.${h[6]! & 0xff}.${h[7]! >> 8}.${h[7]! & 0xff}`, via };
}

/** The eight 16-bit groups of an IPv6 address already validated by isIPv6 (zone removed). */
function hextets(ip: string): number[] {
  let text = ip;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string | undefined) => (part ? part.split(':').map((g) => parseInt(g, 16)) : []);
  const [head, tail] = text.split('::');
  const left = groups(head);
  const right = groups(tail);
  const gap = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...new Array<number>(gap).fill(0), ...right];
}

/** Parses a comma-separated CIDR list ("127.0.0.0/8, ::1/128"); a bare address means /32 or /128. Empty or blank text gives []. */
export function parseCidrs(text: string): string[] {
  return text.split(',').map((entry) => entry.trim()).filter(Boolean).map(parseCidr);
}

function parseCidr(entry: string): string {
  const bad = (why: string) => new Error(`invalid CIDR ${JSON.stringify(entry)}: ${why}`);
  const slash = entry.indexOf('/');
  const address = slash === -1 ? entry : entry.slice(0, slash);
  const family = isIP(address);
  // A zone only means something on one host's interface, never in an operator's allow-list.
  if (family === 0 || address.includes('%')) throw bad('expected an IP address or address/prefix');
  const max = family === 4 ? 32 : 128;
  const prefixText = slash === -1 ? String(max) : entry.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefixText) || Number(prefixText) > max) throw bad(`prefix must be 0-${max}`);
  const prefix = Number(prefixText);
  // Addresses are checked in their IPv4 form when IPv4-mapped, so store mapped ranges the same way.
  if (family === 6 && prefix >= 96) {
    const embedded = embeddedIPv4(address);
    if (embedded?.via === 'mapped') return `${embedded.address}/${prefix - 96}`;
  }
  return `${address}/${prefix}`;
}

function addCidr(list: BlockList, cidr: string, family: Family): void {
  const [address, prefix] = cidr.split('/') as [string, string];
  list.addSubnet(address, Number(prefix), family);
}

function familyOf(cidr: string): Family {
  return isIPv4(cidr.slice(0, cidr.indexOf('/'))) ? 'ipv4' : 'ipv6';
}

const localhostAddress = '127.0.0.1';
const metadataAddress = '169.254.169.254';
const metadataNames = new Set(['metadata.google.internal', 'metadata']);

export class AddressPolicy {
  // One list per family: BlockList matches IPv4 checks against IPv6 rules (`::/0` would admit every IPv4 address).
  private readonly allowed: Record<Family, BlockList> = { ipv4: new BlockList(), ipv6: new BlockList() };

  /** `allowedCidrs` is the operator allow-list (SWITCHYARD_ALLOWED_CIDRS), e.g. parseCidrs' output. Throws on a bad entry. */
  constructor(allowedCidrs: readonly string[]) {
    for (const entry of allowedCidrs) {
      const cidr = parseCidr(entry.trim());
      const family = familyOf(cidr);
      addCidr(this.allowed[family], cidr, family);
    }
  }

  /** Public addresses are allowed; every other class only inside an allow-listed CIDR. Throws TypeError if `ip` is not an IP. */
  checkAddress(ip: string): AddressVerdict {
    const targets = targetsOf(ip);
    const cls = classifyTarget(targets[0]!);
    if (cls === 'public' || targets.some((t) => this.allowed[t.family].check(t.address, t.family))) return { allowed: true, address: ip, class: cls };
    return { allowed: false, address: ip, class: cls, reason: 'blocked_address' };
  }

  /**
   * For a WHATWG URL hostname (`new URL(u).hostname`, which has already turned 2130706433 or
   * 0x7f.0.0.1 into 127.0.0.1; IPv6 in brackets). Names that are local by definition are judged
   * here; any other name needs its resolved addresses checked. Throws TypeError on an empty or
   * malformed bracketed host.
   */
  checkHost(hostname: string): AddressVerdict | { needsResolution: true } {
    if (hostname.startsWith('[')) {
      const inner = hostname.endsWith(']') ? hostname.slice(1, -1) : '';
      if (!isIPv6(inner)) throw new TypeError(`not an IPv6 literal: ${JSON.stringify(hostname)}`);
      return this.checkAddress(inner);
    }
    // "localhost." is the same name as "localhost"; resolvers ignore the root dot.
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === '') throw new TypeError('empty hostname');
    if (isIP(name)) return this.checkAddress(name);
    if (name === 'localhost' || name.endsWith('.localhost')) return this.checkAddress(localhostAddress);
    if (metadataNames.has(name)) return this.checkAddress(metadataAddress);
    return { needsResolution: true };
  }
}
