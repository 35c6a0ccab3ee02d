import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface NewSession {
  tenantId: string;
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

/** All writes of `sessions` (only hashes of session and refresh tokens are stored). */
@Injectable()
export class SessionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async create(session: NewSession): Promise<{ id: string; expiresAt: Date }> {
    const [row] = await this.dataSource.query(
      `INSERT INTO sessions (tenant_id, user_id, session_token_hash, refresh_token_hash, remember, expires_at, ip, user_agent)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), $7, $8) RETURNING id, expires_at`,
      [
        session.tenantId,
        session.userId,
        session.sessionTokenHash,
        session.refreshTokenHash,
        session.remember,
        session.ttlSeconds,
        session.ip,
        session.userAgent,
      ],
    );
    return { id: row.id, expiresAt: row.expires_at };
  }

  async findRefreshable(column: 'refresh_token_hash' | 'session_token_hash', tokenHash: string): Promise<RefreshableSession | null> {
    const rows = await this.dataSource.query(
      `SELECT s.id, s.tenant_id, s.user_id, u.organization_id FROM sessions s
         JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
         JOIN tenants t ON t.id = s.tenant_id AND t.is_active
        WHERE s.${column} = $1 AND s.expires_at > now()`,
      [tokenHash],
    );
    const row = rows[0];
    return row ? { id: row.id, tenantId: row.tenant_id, userId: row.user_id, organizationId: row.organization_id } : null;
  }

  async delete(tenantId: string, sessionId: string): Promise<void> {
    await this.dataSource.query('DELETE FROM sessions WHERE id = $1 AND tenant_id = $2', [sessionId, tenantId]);
  }

  /** Deletes a user's sessions (but `exceptSessionId`); returns the ids deleted. */
  async deleteOfUser(tenantId: string, userId: string, exceptSessionId: string | null): Promise<string[]> {
    const [rows]: [{ id: string }[], number] = await this.dataSource.query(
      'DELETE FROM sessions WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR id <> $3) RETURNING id',
      [tenantId, userId, exceptSessionId],
    );
    return rows.map((r) => r.id);
  }
}
