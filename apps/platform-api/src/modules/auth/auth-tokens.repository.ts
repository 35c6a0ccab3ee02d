import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

export type AuthTokenPurpose = 'password_reset' | 'invitation';

export interface NewAuthToken {
  id: string;
  userId: string;
  purpose: AuthTokenPurpose;
  tokenHash: string;
  /** AES-256-GCM sealed token for the worker that emails the link (token-sealing.ts); erased once sent. */
  sealedToken: string;
  ttlSeconds: number;
}

/**
 * Every statement of `auth_tokens`: single-use password-reset and invitation setup tokens (a hash,
 * and the token sealed until its email is sent).
 */
@Injectable()
export class AuthTokensRepository {
  /** Marks the user's unused invitation tokens used (a new invitation replaces them). */
  async voidInvitations(db: Db, scope: TenantScope, userId: string): Promise<void> {
    await execute(
      db,
      `UPDATE auth_tokens SET used_at = now(), sealed_token = NULL
        WHERE tenant_id = $1 AND user_id = $2 AND purpose = 'invitation' AND used_at IS NULL`,
      [scope.tenantId, userId],
    );
  }

  /** A user's deletion: none of its unused reset or setup tokens can be redeemed any more. */
  async voidAllOfUser(db: Db, scope: TenantScope, userId: string): Promise<void> {
    await execute(db, 'UPDATE auth_tokens SET used_at = now() WHERE tenant_id = $1 AND user_id = $2 AND used_at IS NULL', [
      scope.tenantId,
      userId,
    ]);
  }

  async insert(db: Db, scope: TenantScope, token: NewAuthToken): Promise<{ expiresAt: Date }> {
    const row = await queryOne<{ expires_at: Date }>(
      db,
      `INSERT INTO auth_tokens (id, tenant_id, user_id, purpose, token_hash, sealed_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING expires_at`,
      [token.id, scope.tenantId, token.userId, token.purpose, token.tokenHash, token.sealedToken, token.ttlSeconds],
    );
    if (!row) throw new Error('auth token insert returned no row');
    return { expiresAt: row.expires_at };
  }

  /**
   * Claims a live token atomically (of two concurrent redemptions exactly one gets the row). Found by
   * its hash alone: the token is what tells the tenant.
   */
  async claim(db: Db, tokenHash: string): Promise<{ tenantId: string; userId: string; purpose: AuthTokenPurpose } | null> {
    const row = await queryOne<{ tenant_id: string; user_id: string; purpose: AuthTokenPurpose }>(
      db,
      `UPDATE auth_tokens SET used_at = now(), sealed_token = NULL
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING tenant_id, user_id, purpose`,
      [tokenHash],
    );
    return row ? { tenantId: row.tenant_id, userId: row.user_id, purpose: row.purpose } : null;
  }

  /** A live (unused, unexpired) token that still holds its sealed value (the email job names the row id). */
  async findSealed(db: Db, id: string): Promise<{ purpose: AuthTokenPurpose; sealedToken: string } | null> {
    const row = await queryOne<{ purpose: AuthTokenPurpose; sealed_token: string }>(
      db,
      `SELECT purpose, sealed_token FROM auth_tokens
        WHERE id = $1 AND used_at IS NULL AND expires_at > now() AND sealed_token IS NOT NULL`,
      [id],
    );
    return row ? { purpose: row.purpose, sealedToken: row.sealed_token } : null;
  }

  async eraseSealed(db: Db, id: string): Promise<void> {
    await execute(db, 'UPDATE auth_tokens SET sealed_token = NULL WHERE id = $1', [id]);
  }

  /**
   * Housekeeping, across tenants (so no scope): deletes up to `limit` tokens expired longer ago than
   * `olderThan` (a Postgres interval, from the caller's fixed list); returns how many went.
   */
  purgeExpired(db: Db, input: { olderThan: string; limit: number }): Promise<number> {
    return execute(
      db,
      `DELETE FROM auth_tokens WHERE id IN (
         SELECT id FROM auth_tokens WHERE expires_at < now() - $1::interval ORDER BY expires_at LIMIT $2)`,
      [input.olderThan, input.limit],
    );
  }
}
