import { BlockList, isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses a server-side request to a user-chosen URL must not reach when private targets
 * are refused (mail workflow webhooks, AI provider base URLs chosen by a tenant or a request): one
 * classification for every caller, framework-free.
 *
 * IPv4: loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade NAT, the IETF
 * protocol block, documentation and benchmarking nets, multicast, reserved and "this network".
 *
 * IPv6: loopback and unspecified, unique-local, link-local, site-local, multicast, discard,
 * documentation, benchmarking, ORCHID, local-use NAT64 and SRv6 SIDs; and every form that carries an
 * IPv4 address inside it is judged by that IPv4 address, because the packet ends up there (or the
 * host's stack treats it so): IPv4-compatible `::a.b.c.d` (`::/96`, `::` and `::1` included),
 * IPv4-mapped `::ffff:a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), NAT64 `64:ff9b::a.b.c.d`
 * (RFC 6052), 6to4 `2002:aabb:ccdd::/48` (RFC 3056) and Teredo `2001:0::/32` (RFC 4380: its server
 * and its obfuscated client address).
 */
const NON_PUBLIC_IPV4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC_IPV4.addSubnet(network, prefix, 'ipv4');
}

/** IPv6 blocks refused whatever they carry (the embedding prefixes are handled apart, below). */
const NON_PUBLIC_IPV6 = new BlockList();
for (const [network, prefix] of [
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  NON_PUBLIC_IPV6.addSubnet(network, prefix, 'ipv6');
}

const ipv4Of = (bytes: number[], at: number, mask = 0): string =>
  bytes
    .slice(at, at + 4)
    .map((b) => b ^ mask)
    .join('.');

const zero = (parts: number[], from: number, to: number): boolean => parts.slice(from, to).every((p) => p === 0);

/**
 * The IPv4 addresses an IPv6 address carries by one of the embedding forms above (two for Teredo),
 * none for any other IPv6 address. `parts` are the eight 16-bit groups.
 */
export function embeddedIPv4Addresses(parts: number[]): string[] {
  const bytes = parts.flatMap((p) => [p >> 8, p & 0xff]);
  const [p0, p1, , , p4, p5] = parts;
  // ::/96 (IPv4-compatible), ::ffff:0:0/96 (mapped), ::ffff:0:0:0/96 (translated), 64:ff9b::/96 (NAT64).
  if (zero(parts, 0, 6) || (zero(parts, 0, 5) && p5 === 0xffff) || (zero(parts, 0, 4) && p4 === 0xffff && p5 === 0)) {
    return [ipv4Of(bytes, 12)];
  }
  if (p0 === 0x64 && p1 === 0xff9b && zero(parts, 2, 6)) return [ipv4Of(bytes, 12)];
  if (p0 === 0x2002) return [ipv4Of(bytes, 2)];
  if (p0 === 0x2001 && p1 === 0) return [ipv4Of(bytes, 4), ipv4Of(bytes, 12, 0xff)];
  return [];
}

/**
 * True for an address a request must not reach when private targets are refused; also for anything
 * that is not an IP address at all (refusing is the safe answer to what cannot be classified).
 */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC_IPV4.check(address, 'ipv4');
  if (family !== 6) return true;
  let parts: number[];
  try {
    parts = ipaddr.IPv6.parse(address).parts;
  } catch {
    return true;
  }
  const embedded = embeddedIPv4Addresses(parts);
  if (embedded.length > 0) return embedded.some((v4) => NON_PUBLIC_IPV4.check(v4, 'ipv4'));
  const canonical = parts.map((p) => p.toString(16)).join(':');
  return NON_PUBLIC_IPV6.check(canonical, 'ipv6');
}

/** A URL host written as an IP literal (`[::1]` unbracketed), or null for a name. */
export function ipLiteralOf(hostname: string): string | null {
  const bare = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : null;
}

/** Names that resolve to loopback without asking DNS (RFC 6761). */
export function isLocalName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost');
}

/**
 * What can be known from a URL's host before any lookup: a non-public IP literal, or a name that is
 * loopback by definition. A DNS name is judged when the socket connects (`guardedLookup`).
 */
export function isNonPublicHost(hostname: string): boolean {
  const literal = ipLiteralOf(hostname);
  return literal !== null ? isNonPublicAddress(literal) : isLocalName(hostname);
}
