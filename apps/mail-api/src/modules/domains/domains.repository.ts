import { Injectable } from '@nestjs/common';
import type { MailDomain, MailDomainStatus } from '@app/contracts';
import { execute, query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { SEALED_DKIM_KEY_PREFIX } from './dkim-key-cipher.js';
import { dkimRecordName, dkimRecordValue, ownershipRecordName, type DomainCheckResult } from './domain-records.js';

/** Everything but the private key: API reads never load it, so no response can leak it. */
const DOMAIN_COLUMNS =
  'id, project_id, domain, status, verification_token, dkim_selector, dkim_public_key, ownership_record_found, ' +
  'dkim_record_found, failure_reasons, last_checked_at, verified_at, created_at, updated_at';

export interface DomainRow {
  id: string;
  project_id: string;
  domain: string;
  status: MailDomainStatus;
  verification_token: string;
  dkim_selector: string;
  dkim_public_key: string;
  ownership_record_found: boolean | null;
  dkim_record_found: boolean | null;
  failure_reasons: string[];
  last_checked_at: Date | null;
  verified_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewDomain {
  domain: string;
  verificationToken: string;
  dkimSelector: string;
  /** Sealed (DkimKeyCipher), never the PEM itself. */
  dkimPrivateKey: string;
  dkimPublicKey: string;
}

/** What signing needs: the private key (as stored: sealed, or legacy plaintext), read only for a VERIFIED domain. */
export interface SigningRow {
  id: string;
  domain: string;
  dkim_selector: string;
  dkim_private_key: string;
}

/** A domain whose DKIM key is still stored in plaintext (written before keys were encrypted). */
export interface PlaintextKeyRow {
  id: string;
  project_id: string;
  domain: string;
  dkim_private_key: string;
}

// Serialises the sealing of plaintext keys between instances starting at once.
const SEAL_KEYS_LOCK_KEY = 727_301;

/** `verified` appears on a record once a check has looked for it. */
function withFound<T extends object>(record: T, found: boolean | null): T & { verified?: boolean } {
  return found === null ? record : { ...record, verified: found };
}

export function toDomain(row: DomainRow): MailDomain {
  return {
    id: row.id,
    domain: row.domain,
    status: row.status,
    verified: row.status === 'VERIFIED',
    records: [
      withFound({ type: 'TXT' as const, name: ownershipRecordName(row.domain), value: row.verification_token }, row.ownership_record_found),
      withFound(
        { type: 'TXT' as const, name: dkimRecordName(row.dkim_selector, row.domain), value: dkimRecordValue(row.dkim_public_key) },
        row.dkim_record_found,
      ),
    ],
    failureReasons: row.failure_reasons,
    lastCheckedAt: row.last_checked_at?.toISOString() ?? null,
    verifiedAt: row.verified_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export interface DomainListFilter {
  limit: number;
  beforeId?: string;
  status?: MailDomainStatus;
}

/**
 * The one writer of `domains`. Every statement on a project's domains is scoped to it; the recheck
 * sweep and the sealing of legacy keys work across projects (no scope).
 */
@Injectable()
export class DomainsRepository {
  async exists(db: Db, scope: ProjectScope, domain: string): Promise<boolean> {
    return (await queryOne(db, `SELECT 1 FROM domains WHERE project_id = $1 AND domain = $2`, [scope.projectId, domain])) !== null;
  }

  /** Null when the project already has this domain (the unique index decides, also between racing requests). */
  insert(db: Db, scope: ProjectScope, d: NewDomain): Promise<DomainRow | null> {
    return queryOne<DomainRow>(
      db,
      `INSERT INTO domains (project_id, domain, verification_token, dkim_selector, dkim_private_key, dkim_public_key)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (project_id, domain) DO NOTHING
       RETURNING ${DOMAIN_COLUMNS}`,
      [scope.projectId, d.domain, d.verificationToken, d.dkimSelector, d.dkimPrivateKey, d.dkimPublicKey],
    );
  }

  /** One page (limit + 1 rows, newest first) and the total matching the filter. */
  list(db: Db, scope: ProjectScope, filter: DomainListFilter): Promise<{ rows: DomainRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.status) where.add('status = ?', filter.status);
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<DomainRow>(db, { select: DOMAIN_COLUMNS, from: 'domains', idColumn: 'id', ...page });
  }

  findById(db: Db, scope: ProjectScope, id: string): Promise<DomainRow | null> {
    return queryOne<DomainRow>(db, `SELECT ${DOMAIN_COLUMNS} FROM domains WHERE project_id = $1 AND id = $2`, [scope.projectId, id]);
  }

  /**
   * Records a check. `verified_at` keeps the time the domain first became VERIFIED in its current run
   * of VERIFIED checks, and is cleared when it stops being VERIFIED. Null when the domain was deleted meanwhile.
   */
  saveCheck(db: Db, scope: ProjectScope, input: { id: string; result: DomainCheckResult }): Promise<DomainRow | null> {
    const { result } = input;
    return queryOne<DomainRow>(
      db,
      `UPDATE domains
          SET status = $3::text,
              ownership_record_found = $4,
              dkim_record_found = $5,
              failure_reasons = $6,
              last_checked_at = now(),
              verified_at = CASE WHEN $3::text = 'VERIFIED' THEN coalesce(verified_at, now()) END,
              updated_at = now()
        WHERE project_id = $1 AND id = $2
        RETURNING ${DOMAIN_COLUMNS}`,
      [scope.projectId, input.id, result.status, result.ownershipFound, result.dkimFound, result.failureReasons],
    );
  }

  /** The non-VERIFIED domains of every project checked longest ago (never checked first), from domains_pending_idx. */
  pendingBatch(db: Db, limit: number): Promise<DomainRow[]> {
    return query<DomainRow>(
      db,
      `SELECT ${DOMAIN_COLUMNS} FROM domains WHERE status <> 'VERIFIED' ORDER BY last_checked_at ASC NULLS FIRST LIMIT $1`,
      [limit],
    );
  }

  async delete(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    return (await execute(db, `DELETE FROM domains WHERE project_id = $1 AND id = $2`, [scope.projectId, id])) > 0;
  }

  /** The signing key of a VERIFIED domain (the worker's, and a campaign's sender check): a named prepared statement. */
  async verifiedForSigning(db: Db, scope: ProjectScope, domain: string): Promise<SigningRow | null> {
    const [row] = await queryPrepared<SigningRow>(
      db,
      `SELECT id, domain, dkim_selector, dkim_private_key FROM domains WHERE project_id = $1 AND domain = $2 AND status = 'VERIFIED'`,
      [scope.projectId, domain],
    );
    return row ?? null;
  }

  /**
   * Whether the project has this domain VERIFIED: the sender check of every POST /v1/send, which needs
   * no key (the worker opens it when it signs), so it reads none: an index lookup, one boolean back.
   */
  async isVerified(db: Db, scope: ProjectScope, domain: string): Promise<boolean> {
    const rows = await queryPrepared(db, `SELECT 1 FROM domains WHERE project_id = $1 AND domain = $2 AND status = 'VERIFIED'`, [
      scope.projectId,
      domain,
    ]);
    return rows.length > 0;
  }

  /** Held until `tx` ends: instances starting at once seal the legacy keys one after another. */
  async lockKeySealing(tx: Db): Promise<void> {
    await execute(tx, 'SELECT pg_advisory_xact_lock($1)', [SEAL_KEYS_LOCK_KEY]);
  }

  /** Up to `limit` domains (of every project) whose DKIM key is still plaintext, locked for `tx`. */
  plaintextKeys(tx: Db, limit: number): Promise<PlaintextKeyRow[]> {
    return query<PlaintextKeyRow>(
      tx,
      `SELECT id, project_id, domain, dkim_private_key FROM domains
        WHERE NOT starts_with(dkim_private_key, $1) ORDER BY id LIMIT $2 FOR UPDATE`,
      [SEALED_DKIM_KEY_PREFIX, limit],
    );
  }

  /** Stores sealed keys by domain id, in one statement; a row already sealed is never touched. */
  async storeSealedKeys(tx: Db, sealed: { id: string; key: string }[]): Promise<void> {
    await execute(
      tx,
      `UPDATE domains d SET dkim_private_key = u.sealed
         FROM unnest($1::uuid[], $2::text[]) AS u(id, sealed)
        WHERE d.id = u.id AND NOT starts_with(d.dkim_private_key, $3)`,
      [sealed.map((row) => row.id), sealed.map((row) => row.key), SEALED_DKIM_KEY_PREFIX],
    );
  }

  /**
   * DRAFT, SCHEDULED or SENDING campaigns of the project whose `from` address is on this domain; the
   * expression and condition are campaigns_from_domain_idx's.
   */
  unfinishedCampaignsSendingFrom(
    db: Db,
    scope: ProjectScope,
    input: { domain: string; limit: number },
  ): Promise<{ id: string; name: string }[]> {
    return query<{ id: string; name: string }>(
      db,
      `SELECT id, name FROM campaigns
        WHERE project_id = $1 AND lower(split_part(from_email, '@', 2)) = $2 AND status IN ('DRAFT', 'SCHEDULED', 'SENDING')
        ORDER BY id LIMIT $3`,
      [scope.projectId, input.domain, input.limit],
    );
  }

  /** Templates of the project whose `from` address is on this domain; the expression is templates_from_domain_idx's. */
  templatesSendingFrom(db: Db, scope: ProjectScope, input: { domain: string; limit: number }): Promise<{ id: string; name: string }[]> {
    return query<{ id: string; name: string }>(
      db,
      `SELECT id, name FROM templates WHERE project_id = $1 AND lower(split_part(from_email, '@', 2)) = $2 ORDER BY id LIMIT $3`,
      [scope.projectId, input.domain, input.limit],
    );
  }
}
