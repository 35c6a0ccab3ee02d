import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import type { CommandDefinition } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { scopeIn } from '../../core/scope/tenant-reach.js';
import { consentIntegrityHash, verifyConsentIntegrity, type ConsentIntegrityFields } from './consent-integrity.js';
import { ConsentSnapshots } from './consent-snapshot.js';
import { type ConsentRow, UserConsentsRepository } from './user-consents.repository.js';
import type { ConsentRecordDto, CreateConsentDto } from './user-consents.dto.js';
import { UsersService } from './users.service.js';

const CONSENT_FIELDS = ['consentType', 'isGranted', 'grantedAt', 'withdrawnAt', 'ipAddress', 'source', 'integrityValid'];

/**
 * Consent records (decisions.md "Consents"). The log is append-only: a withdrawal is a new record with
 * `isGranted: false`, so the history stays verifiable. Each record carries an HMAC over its fields;
 * reading recomputes it, so a row altered in the database shows `integrityValid: false`.
 */
@Injectable()
export class UserConsentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly consents: UserConsentsRepository,
    private readonly snapshots: ConsentSnapshots,
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
    snapshot: (tx, consentId) => this.snapshots.snapshot(tx, consentId),
    execute: async (tx, auth, input) => {
      const user = await this.users.findVisible(tx, auth, { id: input.userId });
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
      const row = await this.consents.insert(tx, scopeIn(auth, user.tenantId), {
        ...fields,
        integrityHash: consentIntegrityHash(this.config.consentIntegritySecret, fields),
        at: now,
      });
      return { resourceId: row.id, parent: { kind: 'auth.user', id: user.id }, result: this.toRecord(row) };
    },
  };

  async list(auth: AuthContext, userId: string): Promise<{ items: ConsentRecordDto[] }> {
    const user = await this.users.findVisible(this.dataSource, auth, { id: userId });
    const rows = await this.consents.listOfUser(this.dataSource, scopeIn(auth, user.tenantId), user.id);
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
