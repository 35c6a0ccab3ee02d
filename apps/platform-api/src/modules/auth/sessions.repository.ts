import { Injectable } from '@nestjs/common';
import { type Db, execute, query, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

export interface NewSession {
  userId: string;
  sessionTokenHash: string;
  refreshTokenHash: string | null;
  remember: boolean;
  ttlSeconds: number;
  ip: string;
  userAgent: string | null;
}

/** A session that may still mint access tokens: not expired, its user not deleted, its tenant active. */
export interface RefreshableSession {
  id: string;
  tenantId: string;
  userId: string;
  organizationId: string | null;
}

interface RefreshableRow {
  id: string;
  tenant_id: string;
  user_id: string;
  organization_id: string | null;
}

/**
 * Every write of `sessions` (logins, logouts, revocations, user deletion, tenant deactivation, the
 * purge). Only hashes of session and refresh tokens are stored.
 */
@Injectable()
export class SessionsRepository {
  async create(db: Db, scope: TenantScope, session: NewSession): Promise<{ id: string; expiresAt: Date }> {
    const row = await queryOne<{ id: string; expires_at: Date }>(
      db,
      `INSERT INTO sessions (tenant_id, user_id, session_token_hash, refresh_token_hash, remember, expires_at, ip, user_agent)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), $7, $8) RETURNING id, expires_at`,
      [
        scope.tenantId,
        session.userId,
        session.sessionTokenHash,
        session.refreshTokenHash,
        session.remember,
        session.ttlSeconds,
        session.ip,
        session.userAgent,
      ],
    );
    if (!row) throw new Error('session insert returned no row');
    return { id: row.id, expiresAt: row.expires_at };
  }

  /** Looked up by a token hash alone (before anyone is authenticated): the session tells the tenant. */
  async findRefreshable(
    db: Db,
    input: { column: 'refresh_token_hash' | 'session_token_hash'; tokenHash: string },
  ): Promise<RefreshableSession | null> {
    const row = await queryOne<RefreshableRow>(
      db,
      `SELECT s.id, s.tenant_id, s.user_id, u.organization_id FROM sessions s
         JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
         JOIN tenants t ON t.id = s.tenant_id AND t.is_active
        WHERE s.${input.column} = $1 AND s.expires_at > now()`,
      [input.tokenHash],
    );
    return row ? { id: row.id, tenantId: row.tenant_id, userId: row.user_id, organizationId: row.organization_id } : null;
  }

  async delete(db: Db, scope: TenantScope, sessionId: string): Promise<void> {
    await execute(db, 'DELETE FROM sessions WHERE id = $1 AND tenant_id = $2', [sessionId, scope.tenantId]);
  }

  /** Deletes a user's sessions (but `exceptSessionId`); returns the ids deleted. */
  async deleteOfUser(db: Db, scope: TenantScope, input: { userId: string; exceptSessionId?: string | null }): Promise<string[]> {
    const rows = await query<{ id: string }>(
      db,
      'DELETE FROM sessions WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR id <> $3) RETURNING id',
      [scope.tenantId, input.userId, input.exceptSessionId ?? null],
    );
    return rows.map((r) => r.id);
  }

  /** Tenant deactivation: no token, refresh token or session cookie of the tenant works again. */
  async deleteOfTenant(db: Db, scope: TenantScope): Promise<void> {
    await execute(db, 'DELETE FROM sessions WHERE tenant_id = $1', [scope.tenantId]);
  }

  /**
   * Housekeeping, across tenants (so no scope): deletes up to `limit` sessions expired longer ago than
   * `olderThan` (a Postgres interval, from the caller's fixed list), through the expiry index; returns how many went.
   */
  purgeExpired(db: Db, input: { olderThan: string; limit: number }): Promise<number> {
    return execute(
      db,
      `DELETE FROM sessions WHERE id IN (
         SELECT id FROM sessions WHERE expires_at < now() - $1::interval ORDER BY expires_at LIMIT $2)`,
      [input.olderThan, input.limit],
    );
  }
}
