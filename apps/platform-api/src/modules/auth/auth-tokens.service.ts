import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { AuthTokenPurpose } from './auth-token.entity.js';
import { hashToken, newOpaqueToken } from './credentials.js';

/** decisions.md: reset tokens last 1 hour, invitation setup tokens 48 hours; both single use. */
export const TOKEN_TTL_SECONDS: Record<AuthTokenPurpose, number> = {
  password_reset: 60 * 60,
  invitation: 48 * 60 * 60,
};

@Injectable()
export class AuthTokensService {
  constructor(private readonly dataSource: DataSource) {}

  /** Issues a token; an invitation invalidates the user's earlier invitation tokens. */
  async issue(
    tenantId: string,
    userId: string,
    purpose: AuthTokenPurpose,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ id: string; token: string; expiresAt: Date }> {
    if (purpose === 'invitation') {
      await manager.query(
        `UPDATE auth_tokens SET used_at = now()
          WHERE tenant_id = $1 AND user_id = $2 AND purpose = 'invitation' AND used_at IS NULL`,
        [tenantId, userId],
      );
    }
    const token = newOpaqueToken();
    const [row] = await manager.query(
      `INSERT INTO auth_tokens (tenant_id, user_id, purpose, token_hash, expires_at)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5)) RETURNING id, expires_at`,
      [tenantId, userId, purpose, hashToken(token), TOKEN_TTL_SECONDS[purpose]],
    );
    return { id: row.id, token, expiresAt: row.expires_at };
  }

  /**
   * Claims a live token atomically: of two concurrent redemptions exactly one gets the row.
   * Returns null for unknown, used or expired tokens.
   */
  async redeem(token: string, manager: EntityManager): Promise<{ tenantId: string; userId: string; purpose: AuthTokenPurpose } | null> {
    // For UPDATE ... RETURNING the postgres driver answers [rows, affectedCount].
    const [rows]: [{ tenant_id: string; user_id: string; purpose: AuthTokenPurpose }[], number] = await manager.query(
      `UPDATE auth_tokens SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING tenant_id, user_id, purpose`,
      [hashToken(token)],
    );
    const row = rows[0];
    if (!row) return null;
    return { tenantId: row.tenant_id, userId: row.user_id, purpose: row.purpose };
  }
}
