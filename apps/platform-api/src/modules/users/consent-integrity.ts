import { createHmac, timingSafeEqual } from 'node:crypto';

/** The fields of a consent record the integrity hash covers (decisions.md "Consents"). */
export interface ConsentIntegrityFields {
  userId: string;
  consentType: string;
  isGranted: boolean;
  grantedAt: Date | null;
  withdrawnAt: Date | null;
  ipAddress: string | null;
  source: string | null;
}

/** `|` separates fields and `\` escapes: so a `|` inside a value cannot move a field boundary. */
function escapeField(value: string): string {
  return value.replace(/[\\|]/g, (c) => `\\${c}`);
}

/**
 * THE canonical form hashed for a consent record; writer and verifier both use this and nothing else:
 *
 *   userId|consentType|isGranted|grantedAt|withdrawnAt|ipAddress|source
 *
 * - `isGranted` is `true` or `false`;
 * - dates are ISO 8601 UTC with milliseconds (`Date.prototype.toISOString()`), e.g. `2025-01-02T03:04:05.678Z`;
 * - a null value is the empty string;
 * - in every value `\` is written `\\` and `|` is written `\|` (plain values are unchanged).
 *
 * Changing this function invalidates every stored hash: treat it as a storage format.
 */
export function canonicalConsent(fields: ConsentIntegrityFields): string {
  const text = (value: string | null) => (value === null ? '' : escapeField(value));
  const date = (value: Date | null) => (value === null ? '' : value.toISOString());
  return [
    text(fields.userId),
    text(fields.consentType),
    fields.isGranted ? 'true' : 'false',
    date(fields.grantedAt),
    date(fields.withdrawnAt),
    text(fields.ipAddress),
    text(fields.source),
  ].join('|');
}

/** HMAC-SHA256 (hex) of the canonical form, keyed with `CONSENT_INTEGRITY_SECRET`. */
export function consentIntegrityHash(secret: string, fields: ConsentIntegrityFields): string {
  return createHmac('sha256', secret).update(canonicalConsent(fields), 'utf8').digest('hex');
}

/** Recomputes the hash and compares it with the stored one in constant time. */
export function verifyConsentIntegrity(secret: string, fields: ConsentIntegrityFields, storedHash: string | null): boolean {
  if (!storedHash) return false;
  const expected = Buffer.from(consentIntegrityHash(secret, fields), 'utf8');
  const actual = Buffer.from(storedHash, 'utf8');
  // timingSafeEqual needs equal lengths; a length mismatch is a mismatch (and says nothing about the secret).
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}
