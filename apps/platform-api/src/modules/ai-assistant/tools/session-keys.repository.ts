import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

/** A live session key: its id is the session id tool calls made with it are tied to. */
export interface SessionKeyRow {
  id: string;
  userId: string;
  organizationId: string | null;
  expiresAt: string;
}

interface SessionKeyDbRow {
  id: string;
  user_id: string;
  organization_id: string | null;
  expires_at: string;
}

const COLUMNS = `k.id, k.user_id, k.organization_id, to_char(k.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS expires_at`;

/**
 * A key lives while it has not expired and the login session that made it lives: logout, a password
 * reset and the other ends of a session delete its keys (ON DELETE CASCADE); a session past its
 * `expires_at` that no sweep has deleted yet ends them here.
 */
const LIVE_KEY = `k.expires_at > now() AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = k.login_session_id AND s.expires_at > now())`;

const toRow = (r: SessionKeyDbRow): SessionKeyRow => ({
  id: r.id,
  userId: r.user_id,
  organizationId: r.organization_id,
  expiresAt: r.expires_at,
});

/** The one writer of `ai_session_keys`. Only a hash of a token is stored; each key names the login session that made it. */
@Injectable()
export class SessionKeysRepository {
  async insert(
    db: Db,
    scope: TenantScope,
    input: { organizationId: string | null; loginSessionId: string; tokenHash: string; ttlSeconds: number },
  ): Promise<SessionKeyRow> {
    const row = await queryOne<SessionKeyDbRow>(
      db,
      `INSERT INTO ai_session_keys AS k (tenant_id, user_id, organization_id, login_session_id, token_hash, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))
       RETURNING ${COLUMNS}`,
      [scope.tenantId, scope.userId, input.organizationId, input.loginSessionId, input.tokenHash, input.ttlSeconds],
    );
    if (!row) throw new Error('session key insert returned no row');
    return toRow(row);
  }

  /** The scope user's key with this hash, while it lives; another user's or tenant's is the same null as none. */
  async findLive(db: Db, scope: TenantScope, tokenHash: string): Promise<SessionKeyRow | null> {
    const row = await queryOne<SessionKeyDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_session_keys k WHERE k.token_hash = $1 AND k.tenant_id = $2 AND k.user_id = $3 AND ${LIVE_KEY}`,
      [tokenHash, scope.tenantId, scope.userId],
    );
    return row ? toRow(row) : null;
  }

  /**
   * The live key with this hash, whoever made it: authentication by the key alone (the MCP server),
   * before any scope is known. The key's user must still exist, its tenant be active and its login session live.
   */
  async findLiveForAuthentication(db: Db, tokenHash: string): Promise<(SessionKeyRow & { tenantId: string }) | null> {
    const row = await queryOne<SessionKeyDbRow & { tenant_id: string }>(
      db,
      `SELECT ${COLUMNS}, k.tenant_id
         FROM ai_session_keys k
         JOIN tenants t ON t.id = k.tenant_id AND t.is_active
         JOIN users u ON u.id = k.user_id AND u.tenant_id = k.tenant_id AND u.deleted_at IS NULL
        WHERE k.token_hash = $1 AND ${LIVE_KEY}`,
      [tokenHash],
    );
    return row ? { ...toRow(row), tenantId: row.tenant_id } : null;
  }

  /** The scope user's keys expired more than a day ago (each new key sweeps its owner's). */
  async deleteExpiredOfUser(db: Db, scope: TenantScope): Promise<number> {
    return execute(db, `DELETE FROM ai_session_keys WHERE tenant_id = $1 AND user_id = $2 AND expires_at < now() - interval '1 day'`, [
      scope.tenantId,
      scope.userId,
    ]);
  }
}
