import { BlockList, isIP } from 'node:net';

/**
 * Addresses an outbound call to an identity provider must never reach: anything
 * that is not ordinary public unicast, so a tenant-supplied URL cannot be used to
 * probe the service's own host, its network or a cloud metadata endpoint.
 */
const blockedV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network", includes the unspecified address
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, includes cloud metadata at 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], // TEST-NET-1
  ['192.88.99.0', 24], // retired 6to4 relay anycast
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['198.51.100.0', 24], // TEST-NET-2
  ['203.0.113.0', 24], // TEST-NET-3
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, includes the limited broadcast 255.255.255.255
] as const) {
  blockedV4.addSubnet(network, prefix, 'ipv4');
}

/** Only 2000::/3 is allocated as global unicast; everything outside it is refused outright. */
const globalUnicastV6 = new BlockList();
globalUnicastV6.addSubnet('2000::', 3, 'ipv6');

/**
 * Special-purpose blocks inside 2000::/3. The blocks outside it (::, ::1, fc00::/7,
 * fe80::/10, ff00::/8, 64:ff9b::/96 …) are already excluded by the global-unicast test
 * and are listed here as well so the policy reads as a whole.
 */
const blockedV6 = new BlockList();
for (const [network, prefix] of [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible addresses
  ['64:ff9b::', 96], // NAT64 well-known prefix: the embedded v4 target is unknowable
  ['64:ff9b:1::', 48], // NAT64 local-use prefix
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo tunnels
  ['2001:2::', 48], // benchmarking
  ['2001:10::', 28], // ORCHID
  ['2001:20::', 28], // ORCHIDv2
  ['2001:db8::', 32], // documentation
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
] as const) {
  blockedV6.addSubnet(network, prefix, 'ipv6');
}

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/**
 * True when `ip` is an IPv4 or IPv6 literal for ordinary public unicast. Anything that
 * is not an IP literal, and any scoped (`%zone`) address, is refused.
 */
export function isPublicAddress(ip: string): boolean {
  if (ip.includes('%')) return false;
  const family = isIP(ip);
  if (family === 4) return !blockedV4.check(ip, 'ipv4');
  if (family !== 6) return false;

  const embedded = embeddedIPv4(ip);
  if (embedded !== null) return isPublicAddress(embedded);
  return globalUnicastV6.check(ip, 'ipv6') && !blockedV6.check(ip, 'ipv6');
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopbackAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return loopback.check(ip, 'ipv4');
  if (family !== 6 || ip.includes('%')) return false;
  const embedded = embeddedIPv4(ip);
  return embedded !== null ? loopback.check(embedded, 'ipv4') : loopback.check(ip, 'ipv6');
}

/**
 * The IPv4 address carried by an IPv4-mapped (::ffff:a.b.c.d, in dotted or hex form)
 * or 6to4 (2002:AABB:CCDD::/48) IPv6 address, which a dual-stack socket or a 6to4
 * relay would deliver to that IPv4 host. Null for any other address.
 */
function embeddedIPv4(ip: string): string | null {
  const groups = ipv6Groups(ip);
  const isMapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  if (isMapped) return groupsToIPv4(groups[6], groups[7]);
  if (groups[0] === 0x2002) return groupsToIPv4(groups[1], groups[2]);
  return null;
}

function groupsToIPv4(high: number, low: number): string {
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/**
 * The eight 16-bit groups of an IPv6 literal. The WHATWG URL parser canonicalises the
 * text first (dotted-quad tails become hex, case and leading zeros are normalised), so
 * only the `::` expansion is left to do here.
 */
function ipv6Groups(ip: string): number[] {
  const canonical = new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  const [head, tail] = canonical.includes('::') ? canonical.split('::') : [canonical, undefined];
  const parse = (part: string | undefined): number[] =>
    part ? part.split(':').map((g) => parseInt(g, 16)) : [];
  const left = parse(head);
  const right = parse(tail);
  const zeros = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  return [...left, ...zeros, ...right];
}
