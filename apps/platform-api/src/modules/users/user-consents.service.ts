import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import type { CommandDefinition } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { consentIntegrityHash, verifyConsentIntegrity, type ConsentIntegrityFields } from './consent-integrity.js';
import { snapshotConsent } from './consent-snapshot.js';
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

const CONSENT_FIELDS = ['consentType', 'isGranted', 'grantedAt', 'withdrawnAt', 'ipAddress', 'source', 'integrityValid'];
const COLUMNS =
  'id, user_id, consent_type, is_granted, granted_at, withdrawn_at, ip_address, source, integrity_hash, created_at, updated_at';

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
    private readonly accessLog: AccessLogService,
    private readonly bus: CommandBus,
  ) {}

  /**
   * POST /auth/users/consents: logged like every mutation, but without `restore` (so without an undo
   * token): the consent log is append-only, a withdrawal is a new record.
   */
  private readonly recordCommand: CommandDefinition<CreateConsentDto & { ip: string }, ConsentRecordDto> = {
    id: 'auth.users.consents.create',
    features: ['auth.users.edit'],
    label: 'Record consent',
    actionType: 'create',
    resourceKind: 'auth.user_consent',
    snapshot: snapshotConsent,
    execute: async (tx, auth, input) => {
      const user = await this.users.findVisible(auth, tx, input.userId);
      // A JS Date (millisecond precision) round-trips through timestamptz unchanged, so the hash we
      // compute here is the hash a later read recomputes.
      const now = new Date();
      const fields: ConsentIntegrityFields = {
        userId: user.id,
        consentType: input.consentType,
        isGranted: input.isGranted,
        grantedAt: input.isGranted ? now : null,
        withdrawnAt: input.isGranted ? null : now,
        ipAddress: input.ip,
        source: input.source?.trim() ? input.source.trim() : null,
      };
      const [row]: ConsentRow[] = await tx.query(
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
      return { resourceId: row.id, parent: { kind: 'auth.user', id: user.id }, result: this.toRecord(row) };
    },
  };

  async list(auth: AuthContext, userId: string): Promise<{ items: ConsentRecordDto[] }> {
    const user = await this.users.findVisible(auth, this.dataSource, userId);
    const rows: ConsentRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM user_consents WHERE tenant_id = $1 AND user_id = $2 ORDER BY created_at DESC, id DESC`,
      [user.tenantId, user.id],
    );
    this.accessLog.record(auth, {
      resourceKind: 'auth.user_consent',
      resourceId: user.id,
      accessType: 'read',
      fields: CONSENT_FIELDS,
      context: { records: rows.length },
    });
    return { items: rows.map((row) => this.toRecord(row)) };
  }

  /** Appends a consent record (command `auth.users.consents.create`, logged, not undoable). */
  record(auth: AuthContext, input: CreateConsentDto, ip: string): Promise<ConsentRecordDto> {
    return this.bus.execute(auth, this.recordCommand, { ...input, ip });
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
