import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

type Queryable = Pick<EntityManager, 'query'>;

/** The account a login checks: one user, whose one password hash is verified. */
export interface LoginAccount {
  id: string;
  tenantId: string;
  organizationId: string | null;
  passwordHash: string | null;
}

/** The auth module's SQL on `users`: logins, the caller's own profile, and password (re)setting. */
@Injectable()
export class AccountsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * The one account a login with this email is checked against, among users not deleted in active
   * tenants (in `tenantId` only, when given). Without a tenant the rule is: an account that has a
   * password before one still invited, then the oldest (created_at, then id, so it is deterministic).
   */
  async findLoginAccount(email: string, tenantId: string | null): Promise<LoginAccount | null> {
    const rows = await this.dataSource.query(
      `SELECT u.id, u.tenant_id, u.organization_id, u.password_hash FROM users u
         JOIN tenants t ON t.id = u.tenant_id AND t.is_active
        WHERE lower(u.email) = $1 AND u.deleted_at IS NULL AND ($2::uuid IS NULL OR u.tenant_id = $2)
        ORDER BY (u.password_hash IS NULL), u.created_at, u.id
        LIMIT 1`,
      [email, tenantId],
    );
    const row = rows[0];
    return row ? { id: row.id, tenantId: row.tenant_id, organizationId: row.organization_id, passwordHash: row.password_hash } : null;
  }

  /** Users a reset request for this email reaches (in active tenants; in `tenantId` only, when given). */
  async findForReset(email: string, tenantId: string | null): Promise<{ id: string; tenantId: string; email: string }[]> {
    const rows: { id: string; tenant_id: string; email: string }[] = await this.dataSource.query(
      `SELECT u.id, u.tenant_id, u.email FROM users u
         JOIN tenants t ON t.id = u.tenant_id AND t.is_active
        WHERE lower(u.email) = $1 AND u.deleted_at IS NULL AND ($2::uuid IS NULL OR u.tenant_id = $2)
        ORDER BY u.created_at LIMIT 10`,
      [email, tenantId],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, email: r.email }));
  }

  async find(tenantId: string, userId: string): Promise<{ email: string; passwordHash: string | null; locale: string | null } | null> {
    const rows = await this.dataSource.query(
      'SELECT email, password_hash, locale FROM users WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL',
      [userId, tenantId],
    );
    const row = rows[0];
    return row ? { email: row.email, passwordHash: row.password_hash, locale: row.locale } : null;
  }

  async emailTaken(tenantId: string, email: string, exceptUserId: string): Promise<boolean> {
    const rows = await this.dataSource.query(
      'SELECT 1 FROM users WHERE tenant_id = $1 AND lower(email) = $2 AND id <> $3 AND deleted_at IS NULL',
      [tenantId, email, exceptUserId],
    );
    return rows.length > 0;
  }

  /** Sets the email and/or the password hash (null keeps the current one); the resulting email, or null if gone. */
  async updateCredentials(
    tenantId: string,
    userId: string,
    change: { email: string | null; passwordHash: string | null },
  ): Promise<string | null> {
    const [rows]: [{ email: string }[], number] = await this.dataSource.query(
      `UPDATE users SET email = COALESCE($3, email), password_hash = COALESCE($4, password_hash), updated_at = now()
        WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL RETURNING email`,
      [userId, tenantId, change.email, change.passwordHash],
    );
    return rows[0]?.email ?? null;
  }

  async setPassword(db: Queryable, tenantId: string, userId: string, passwordHash: string): Promise<void> {
    await db.query('UPDATE users SET password_hash = $1, updated_at = now() WHERE id = $2 AND tenant_id = $3', [
      passwordHash,
      userId,
      tenantId,
    ]);
  }

  async getLocale(tenantId: string, userId: string): Promise<string | null> {
    const rows = await this.dataSource.query('SELECT locale FROM users WHERE id = $1 AND tenant_id = $2', [userId, tenantId]);
    return rows[0]?.locale ?? null;
  }

  async setLocale(tenantId: string, userId: string, locale: string): Promise<void> {
    await this.dataSource.query('UPDATE users SET locale = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2', [
      userId,
      tenantId,
      locale,
    ]);
  }
}
