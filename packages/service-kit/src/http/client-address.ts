import { isIP } from 'node:net';
import { ConfigError } from '../config/load-config.js';

/**
 * Which peers may set `X-Forwarded-For` (the `TRUST_PROXY` setting): `false` (none, the default: the
 * client address is the socket's), a hop count (trust that many proxies in front of the service), or a
 * list of proxy addresses / CIDR ranges. Trusting "any private address" would let every pod or NAT'd
 * client pick its own IP and walk around per-IP limits, so nothing is trusted unless configured.
 */
export type TrustProxySetting = false | number | string[];

/** Parses `TRUST_PROXY`: empty/`false`/`0` → none; `1`, `2`... → hops; `10.0.0.0/8,192.168.1.7` → those peers. */
export function parseTrustProxy(value: string | undefined): TrustProxySetting {
  const text = (value ?? '').trim();
  if (text === '' || text === 'false' || text === '0') return false;
  if (/^\d+$/.test(text)) {
    const hops = Number(text);
    if (hops > 32) throw new ConfigError(`invalid configuration: TRUST_PROXY: a hop count must be at most 32 (got ${text})`);
    return hops;
  }
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  for (const entry of entries) {
    if (!isAddressOrCidr(entry)) {
      throw new ConfigError(`invalid configuration: TRUST_PROXY: "${entry}" is neither a hop count, an IP address nor a CIDR range`);
    }
  }
  return entries;
}

function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, extra] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * The key per-IP rate limits count under: an IPv4 address as is; an IPv6 client by its /64 network,
 * since one subscriber usually owns a whole /64 and could otherwise rotate through 2^64 addresses.
 * IPv4-mapped IPv6 (`::ffff:1.2.3.4`) counts as its IPv4 address.
 */
export function clientIpBucket(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (isIP(ip) !== 6) return ip;
  const groups = expandIpv6(ip.split('%')[0]);
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** `2001:db8::1` → the eight 16-bit groups, lower-case hex without leading zeros. */
function expandIpv6(ip: string): string[] {
  let text = ip.toLowerCase();
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = text.slice(0, v4.index) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(missing).fill('0'), ...right].map((group) => parseInt(group, 16).toString(16));
}
