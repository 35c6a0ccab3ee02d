import { createHash, randomBytes } from 'node:crypto';
import { MAIL_PUBLIC_KEY_PREFIX, MAIL_SECRET_KEY_PREFIX } from '@app/contracts';

/** decisions.md "Mail": `sk_`/`pk_` + 24 random bytes in hex. */
export const SECRET_KEY_PATTERN = /^sk_[0-9a-f]{48}$/;
export const PUBLIC_KEY_PATTERN = /^pk_[0-9a-f]{48}$/;

/** How many leading characters of a secret key are kept in clear, so an operator can tell keys apart. */
const DISPLAY_PREFIX_LENGTH = 10;

export type ProjectKeyKind = 'secret' | 'public';

export interface ProjectKeyPair {
  secretKey: string;
  publicKey: string;
}

/** What the database keeps of a key pair: hashes for lookups, a short prefix for display. */
export interface StoredKeyPair {
  secretKeyHash: string;
  publicKeyHash: string;
  secretKeyPrefix: string;
}

export function generateKeyPair(): ProjectKeyPair {
  return {
    secretKey: MAIL_SECRET_KEY_PREFIX + randomBytes(24).toString('hex'),
    publicKey: MAIL_PUBLIC_KEY_PREFIX + randomBytes(24).toString('hex'),
  };
}

/**
 * SHA-256 hex. The keys carry 192 random bits, so a fast unsalted hash is safe (no dictionary to try)
 * and deterministic, which lets a request find its project by an indexed equality lookup.
 */
export function hashKey(rawKey: string): string {
  return createHash('sha256').update(rawKey, 'utf8').digest('hex');
}

export function storedKeyPair(keys: ProjectKeyPair): StoredKeyPair {
  return {
    secretKeyHash: hashKey(keys.secretKey),
    publicKeyHash: hashKey(keys.publicKey),
    secretKeyPrefix: keys.secretKey.slice(0, DISPLAY_PREFIX_LENGTH),
  };
}

/** The kind of a well-formed key, or null for anything that cannot be one of ours. */
export function keyKindOf(rawKey: string): ProjectKeyKind | null {
  if (SECRET_KEY_PATTERN.test(rawKey)) return 'secret';
  if (PUBLIC_KEY_PATTERN.test(rawKey)) return 'public';
  return null;
}
