import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Snapshot } from '../../core/audit/command.js';
import { UserConsentsRepository } from './user-consents.repository.js';

/**
 * A consent record as the action log records it (`auth.user_consent`). Records are append-only, so the
 * command that writes one has no inverse: a withdrawal is a new record, never an undo.
 */
@Injectable()
export class ConsentSnapshots {
  constructor(private readonly consents: UserConsentsRepository) {}

  async snapshot(tx: EntityManager, consentId: string): Promise<Snapshot | null> {
    const row = await this.consents.findById(tx, consentId);
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
}
