import { Injectable } from '@nestjs/common';
import { type Db, query, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** The account a login checks: one user, whose one password hash is verified. */
export interface LoginAccount {
  id: string;
  tenantId: string;
  organizationId: string | null;
  passwordHash: string | null;
}

/** The caller's own account, as the profile and the invitation need it. */
export interface OwnAccount {
  email: string;
  passwordHash: string | null;
  locale: string | null;
}

interface LoginAccountRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  password_hash: string | null;
}

/**
 * The auth module's reads of `users`: the account a login or a reset request reaches (before anyone is
 * authenticated, so by email, in a tenant only when one is named) and the caller's own account.
 * Writes go through the users module's UsersRepository.
 */
@Injectable()
export class AccountsRepository {
  /**
   * The one account a login with this email is checked against, among users not deleted in active
   * tenants (in `tenantId` only, when given). Without a tenant the rule is: an account that has a
   * password before one still invited, then the oldest (created_at, then id, so it is deterministic).
   */
  async findLoginAccount(db: Db, input: { email: string; tenantId: string | null }): Promise<LoginAccount | null> {
    const row = await queryOne<LoginAccountRow>(
      db,
      `SELECT u.id, u.tenant_id, u.organization_id, u.password_hash FROM users u
         JOIN tenants t ON t.id = u.tenant_id AND t.is_active
        WHERE lower(u.email) = $1 AND u.deleted_at IS NULL AND ($2::uuid IS NULL OR u.tenant_id = $2)
        ORDER BY (u.password_hash IS NULL), u.created_at, u.id
        LIMIT 1`,
      [input.email, input.tenantId],
    );
    return row ? { id: row.id, tenantId: row.tenant_id, organizationId: row.organization_id, passwordHash: row.password_hash } : null;
  }

  /** Users a reset request for this email reaches (in active tenants; in `tenantId` only, when given). */
  async findForReset(
    db: Db,
    input: { email: string; tenantId: string | null },
  ): Promise<{ id: string; tenantId: string; email: string }[]> {
    const rows = await query<{ id: string; tenant_id: string; email: string }>(
      db,
      `SELECT u.id, u.tenant_id, u.email FROM users u
         JOIN tenants t ON t.id = u.tenant_id AND t.is_active
        WHERE lower(u.email) = $1 AND u.deleted_at IS NULL AND ($2::uuid IS NULL OR u.tenant_id = $2)
        ORDER BY u.created_at LIMIT 10`,
      [input.email, input.tenantId],
    );
    return rows.map((r) => ({ id: r.id, tenantId: r.tenant_id, email: r.email }));
  }

  async find(db: Db, scope: TenantScope, userId: string): Promise<OwnAccount | null> {
    const row = await queryOne<{ email: string; password_hash: string | null; locale: string | null }>(
      db,
      'SELECT email, password_hash, locale FROM users WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL',
      [userId, scope.tenantId],
    );
    return row ? { email: row.email, passwordHash: row.password_hash, locale: row.locale } : null;
  }

  async getLocale(db: Db, scope: TenantScope, userId: string): Promise<string | null> {
    const row = await queryOne<{ locale: string | null }>(db, 'SELECT locale FROM users WHERE id = $1 AND tenant_id = $2', [
      userId,
      scope.tenantId,
    ]);
    return row?.locale ?? null;
  }
}
