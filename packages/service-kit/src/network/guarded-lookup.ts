import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isNonPublicAddress } from './non-public-address.js';

/** A connection refused because its target is (or resolves to) a non-public address. */
export class NonPublicAddressError extends Error {
  override readonly name = 'NonPublicAddressError';
  readonly code = 'ERR_NON_PUBLIC_ADDRESS';
}

/**
 * A `lookup` for `net.connect`, `http.request` or an undici `Agent`'s `connect` options that fails when
 * any address the name resolves to is not public (every one is checked, not just the first). The socket
 * then connects to an address that was checked in this very lookup, so a name that resolves to a public
 * address once and to a private one later (DNS rebinding) cannot slip through. Node skips `lookup` for
 * IP literals: check those before connecting (`isNonPublicHost`).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    if (addresses.length === 0 || addresses.some((a) => isNonPublicAddress(a.address))) {
      return callback(new NonPublicAddressError(`refused: ${hostname} resolves to a private or loopback address`), '', 0);
    }
    if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    return callback(null, addresses[0].address, addresses[0].family);
  });
};
