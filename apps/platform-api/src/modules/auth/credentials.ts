import { createHash, randomBytes } from 'node:crypto';
import argon2 from 'argon2';

export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_LENGTH = 256;

/**
 * argon2id with OWASP's recommended minimum (19 MiB, 2 passes, 1 lane): the library default (64 MiB,
 * 3 passes, 4 lanes) allows only ~10 logins/s on a 2-core node. Verification reads the parameters
 * from each hash, so stronger settings can be rolled out later without breaking stored hashes.
 */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, ARGON2_OPTIONS);
}

// Verified against when no account matches, so an unknown email costs what a wrong password costs.
let decoyHash: Promise<string> | undefined;

export async function verifyPassword(hash: string | null, password: string): Promise<boolean> {
  if (!hash) {
    decoyHash ??= hashPassword(randomBytes(16).toString('hex'));
    await argon2.verify(await decoyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(hash, password).catch(() => false);
}

/** An opaque bearer secret (session, refresh, reset and setup tokens). */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Opaque tokens are high-entropy, so a fast hash is enough; only the hash is stored. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
