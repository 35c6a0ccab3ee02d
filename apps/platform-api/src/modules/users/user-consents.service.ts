import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { consentIntegrityHash, verifyConsentIntegrity, type ConsentIntegrityFields } from './consent-integrity.js';
import type { ConsentRecordDto, CreateConsentDto } from './users.dto.js';
import { UsersService } from './users.service.js';

interface ConsentRow {
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

const COLUMNS = 'id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source, integrity_hash, created_at, updated_at';

/**
 * Consent records (decisions.md "Consents"). The log is append-only: a withdrawal is a new record with
 * `isGranted: false`, so the history stays verifiable. Each record carries an HMAC over its fields;
 * reading recomputes it, so a row altered in the database shows `integrityValid: false`.
 */
@Injectable()
export class UserConsentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  async list(auth: AuthContext, userId: string): Promise<{ items: ConsentRecordDto[] }> {
    const user = await this.users.findVisible(auth, this.dataSource, userId);
    const rows: ConsentRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM user_consents WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC`,
      [user.tenantId, user.id],
    );
    return { items: rows.map((row) => this.toRecord(row)) };
  }

  async record(auth: AuthContext, input: CreateConsentDto, ip: string): Promise<ConsentRecordDto> {
    const user = await this.users.findVisible(auth, this.dataSource, input.userId);
    // A JS Date (millisecond precision) round-trips through timestamptz unchanged, so the hash we
    // compute here is the hash a later read recomputes.
    const now = new Date();
    const fields: ConsentIntegrityFields = {
      userId: user.id,
      consentType: input.consentType,
      isGranted: input.isGranted,
      grantedAt: input.isGranted ? now : null,
      withdrawnAt: input.isGranted ? null : now,
      ipAddress: ip,
      source: input.source?.trim() ? input.source.trim() : null,
    };
    const [row]: ConsentRow[] = await this.dataSource.query(
      `INSERT INTO user_consents
         (tenant_id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source, integrity_hash, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
       RETURNING ${COLUMNS}`,
      [
        user.tenantId,
        fields.userId,
        fields.consentType,
        fields.isGranted,
        fields.grantedAt,
        fields.withdrawnAt,
        fields.ipAddress,
        fields.source,
        consentIntegrityHash(this.config.consentIntegritySecret, fields),
        now,
      ],
    );
    return this.toRecord(row);
  }

  private toRecord(row: ConsentRow): ConsentRecordDto {
    const fields: ConsentIntegrityFields = {
      userId: row.user_id,
      consentType: row.consent_type,
      isGranted: row.is_granted,
      grantedAt: row.granted_at,
      withdrawnAt: row.withdrawn_at,
      ipAddress: row.ip_address,
      source: row.source,
    };
    return {
      id: row.id,
      userId: row.user_id,
      consentType: row.consent_type,
      isGranted: row.is_granted,
      grantedAt: row.granted_at?.toISOString() ?? null,
      withdrawnAt: row.withdrawn_at?.toISOString() ?? null,
      ipAddress: row.ip_address,
      source: row.source,
      integrityHash: row.integrity_hash,
      integrityValid: verifyConsentIntegrity(this.config.consentIntegritySecret, fields, row.integrity_hash),
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
    };
  }
}
