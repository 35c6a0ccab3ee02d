import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuthTokenPurpose } from './auth-token.entity.js';

/** Anything that runs SQL: the DataSource's manager, or a transaction's EntityManager. */
type Queryable = Pick<EntityManager, 'query'>;

/** All SQL of `auth_tokens` (one-time password-reset and invitation setup tokens). */
@Injectable()
export class AuthTokensRepository {
  /** Marks the user's unused invitation tokens used (a new invitation replaces them). */
  async voidInvitations(db: Queryable, tenantId: string, userId: string): Promise<void> {
    await db.query(
      `UPDATE auth_tokens SET used_at = now(), sealed_token = NULL
        WHERE tenant_id = $1 AND user_id = $2 AND purpose = 'invitation' AND used_at IS NULL`,
      [tenantId, userId],
    );
  }

  async insert(
    db: Queryable,
    row: {
      id: string;
      tenantId: string;
      userId: string;
      purpose: AuthTokenPurpose;
      tokenHash: string;
      sealedToken: string;
      ttlSeconds: number;
    },
  ): Promise<{ expiresAt: Date }> {
    const [inserted] = await db.query(
      `INSERT INTO auth_tokens (id, tenant_id, user_id, purpose, token_hash, sealed_token, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, now() + make_interval(secs => $7)) RETURNING expires_at`,
      [row.id, row.tenantId, row.userId, row.purpose, row.tokenHash, row.sealedToken, row.ttlSeconds],
    );
    return { expiresAt: inserted.expires_at };
  }

  /** Claims a live token atomically (of two concurrent redemptions exactly one gets the row). */
  async claim(db: Queryable, tokenHash: string): Promise<{ tenantId: string; userId: string; purpose: AuthTokenPurpose } | null> {
    // For UPDATE ... RETURNING the postgres driver answers [rows, affectedCount].
    const [rows]: [{ tenant_id: string; user_id: string; purpose: AuthTokenPurpose }[], number] = await db.query(
      `UPDATE auth_tokens SET used_at = now(), sealed_token = NULL
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING tenant_id, user_id, purpose`,
      [tokenHash],
    );
    const row = rows[0];
    return row ? { tenantId: row.tenant_id, userId: row.user_id, purpose: row.purpose } : null;
  }

  /** A live (unused, unexpired) token that still holds its sealed value. */
  async findSealed(db: Queryable, id: string): Promise<{ purpose: AuthTokenPurpose; sealedToken: string } | null> {
    const rows: { purpose: AuthTokenPurpose; sealed_token: string }[] = await db.query(
      `SELECT purpose, sealed_token FROM auth_tokens
        WHERE id = $1 AND used_at IS NULL AND expires_at > now() AND sealed_token IS NOT NULL`,
      [id],
    );
    return rows[0] ? { purpose: rows[0].purpose, sealedToken: rows[0].sealed_token } : null;
  }

  async eraseSealed(db: Queryable, id: string): Promise<void> {
    await db.query('UPDATE auth_tokens SET sealed_token = NULL WHERE id = $1', [id]);
  }
}
