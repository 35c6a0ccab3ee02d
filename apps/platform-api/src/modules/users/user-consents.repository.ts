import { Injectable } from '@nestjs/common';
import { type Db, query, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

export interface ConsentRow {
  id: string;
  user_id: string;
  consent_type: string;
  is_granted: boolean;
  granted_at: Date | null;
  withdrawn_at: Date | null;
  ip_address: string | null;
  source: string | null;
  integrity_hash: string;
  created_at: Date;
  updated_at: Date;
}

export interface NewConsent {
  userId: string;
  consentType: string;
  isGranted: boolean;
  grantedAt: Date | null;
  withdrawnAt: Date | null;
  ipAddress: string | null;
  source: string | null;
  integrityHash: string;
  /** created_at and updated_at: the time the hashed dates were taken. */
  at: Date;
}

const COLUMNS =
  'id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source, integrity_hash, created_at, updated_at';

/** Every statement of `user_consents`: an append-only log (a withdrawal is a new record). */
@Injectable()
export class UserConsentsRepository {
  async insert(db: Db, scope: TenantScope, consent: NewConsent): Promise<ConsentRow> {
    const row = await queryOne<ConsentRow>(
      db,
      `INSERT INTO user_consents
         (tenant_id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source, integrity_hash, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
       RETURNING ${COLUMNS}`,
      [
        scope.tenantId,
        consent.userId,
        consent.consentType,
        consent.isGranted,
        consent.grantedAt,
        consent.withdrawnAt,
        consent.ipAddress,
        consent.source,
        consent.integrityHash,
        consent.at,
      ],
    );
    if (!row) throw new Error('consent insert returned no row');
    return row;
  }

  /** The user's records in the scope's tenant, newest first. */
  listOfUser(db: Db, scope: TenantScope, userId: string): Promise<ConsentRow[]> {
    return query<ConsentRow>(
      db,
      `SELECT ${COLUMNS} FROM user_consents WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC`,
      [scope.tenantId, userId],
    );
  }

  /** One record by id (the action log's snapshot of the command that wrote it). */
  findById(db: Db, id: string): Promise<ConsentRow | null> {
    return queryOne<ConsentRow>(db, `SELECT ${COLUMNS} FROM user_consents WHERE id = $1`, [id]);
  }
}
