import type { EntityManager } from 'typeorm';
import type { Snapshot } from '../../core/audit/command.js';

/**
 * A consent record as the action log records it (`auth.user_consent`). Records are append-only, so the
 * command that writes one has no inverse: a withdrawal is a new record, never an undo.
 */
export async function snapshotConsent(tx: EntityManager, consentId: string): Promise<Snapshot | null> {
  const [row] = await tx.query(
    `SELECT id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source FROM user_consents WHERE id = $1`,
    [consentId],
  );
  if (!row) return null;
  return {
    id: row.id,
    userId: row.user_id,
    consentType: row.consent_type,
    isGranted: row.is_granted,
    grantedAt: row.granted_at ? new Date(row.granted_at).toISOString() : null,
    withdrawnAt: row.withdrawn_at ? new Date(row.withdrawn_at).toISOString() : null,
    ipAddress: row.ip_address,
    source: row.source,
  };
}
