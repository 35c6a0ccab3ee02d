import { Injectable } from '@nestjs/common';
import { type Db, execute, likePattern, query, queryOne } from '@app/service-kit';
import type { TenantReach } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** A user that is not deleted, as the write paths need it. */
export interface UserRecord {
  id: string;
  tenantId: string;
  organizationId: string | null;
  email: string;
  hasPassword: boolean;
}

export interface UserListRow {
  id: string;
  email: string;
  name: string | null;
  roles: { id: string; name: string }[];
  tenantId: string;
  organizationId: string | null;
  hasPassword: boolean;
  createdAt: Date;
}

export interface UserListFilter {
  id?: string;
  search?: string;
  roleId?: string;
  organizationId?: string;
  limit: number;
  offset: number;
}

/** The whole row, deleted or not, as the action log's snapshots and restores read it. */
export interface StoredUserRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  email: string;
  name: string | null;
  password_hash: string | null;
  created_at: Date;
  deleted_at: Date | null;
}

export interface NewUser {
  organizationId: string | null;
  email: string;
  name: string | null;
  passwordHash: string | null;
}

export interface UserPatch {
  email?: string;
  name?: string | null;
  passwordHash?: string;
  organizationId?: string | null;
}

/** `FOR UPDATE` serialises edits of one user; `FOR NO KEY UPDATE` only its ACL writers. */
export type UserLock = 'update' | 'no key update';

interface UserListDbRow {
  total: number;
  id: string | null;
  email: string;
  name: string | null;
  tenant_id: string;
  organization_id: string | null;
  has_password: boolean;
  created_at: Date;
  roles: { id: string; name: string }[] | null;
}

interface UserRecordRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  email: string;
  has_password: boolean;
}

const PATCH_COLUMNS: Record<keyof UserPatch, string> = {
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  organizationId: 'organization_id',
};

const lockClause = (lock: UserLock | undefined) => (lock ? `FOR ${lock.toUpperCase()}` : '');

/**
 * Every write of `users` (user management, the caller's own credentials and locale, password resets,
 * the bootstrap, undo and redo). Every statement names the tenant it acts in, but the snapshot reads
 * by id (the action log's entry knows the user, not yet its tenant).
 */
@Injectable()
export class UsersRepository {
  /**
   * One statement: the filtered set, its size, and one page whose roles are aggregated with
   * json_agg (no query per user). Answers the total even past the last page. The reach's
   * organizations (when restricted) narrow it to their users.
   */
  async list(db: Db, reach: TenantReach, filter: UserListFilter): Promise<{ total: number; items: UserListRow[] }> {
    const rows = await query<UserListDbRow>(
      db,
      `WITH matched AS (
         SELECT u.id, u.tenant_id, u.organization_id, u.email, u.name, u.password_hash IS NOT NULL AS has_password, u.created_at
           FROM users u
          WHERE u.deleted_at IS NULL
            AND ($1::uuid IS NULL OR u.tenant_id = $1)
            AND ($2::uuid[] IS NULL OR u.organization_id = ANY($2::uuid[]))
            AND ($3::uuid IS NULL OR u.id = $3)
            AND ($4::text IS NULL OR u.email ILIKE $4 OR u.name ILIKE $4)
            AND ($5::uuid IS NULL OR EXISTS (
                  SELECT 1 FROM user_roles f WHERE f.tenant_id = u.tenant_id AND f.user_id = u.id AND f.role_id = $5))
            AND ($6::uuid IS NULL OR u.organization_id = $6)
       ),
       counted AS (SELECT count(*)::int AS total FROM matched),
       page AS (SELECT * FROM matched ORDER BY email, id LIMIT $7 OFFSET $8),
       page_roles AS (
         SELECT p.id,
                json_agg(json_build_object('id', r.id, 'name', r.name) ORDER BY lower(r.name), r.id)
                  FILTER (WHERE r.id IS NOT NULL) AS roles
           FROM page p
           LEFT JOIN user_roles ur ON ur.tenant_id = p.tenant_id AND ur.user_id = p.id
           LEFT JOIN roles r ON r.id = ur.role_id
          GROUP BY p.id
       )
       SELECT c.total, p.id, p.email, p.name, p.tenant_id, p.organization_id, p.has_password, p.created_at, pr.roles
         FROM counted c
         LEFT JOIN page p ON true
         LEFT JOIN page_roles pr ON pr.id = p.id
        ORDER BY p.email, p.id`,
      [
        reach.tenantId,
        reach.organizationIds,
        filter.id ?? null,
        filter.search ? likePattern(filter.search) : null,
        filter.roleId ?? null,
        filter.organizationId ?? null,
        filter.limit,
        filter.offset,
      ],
    );
    return {
      total: rows[0]?.total ?? 0,
      items: rows.flatMap((r) =>
        r.id === null
          ? []
          : [
              {
                id: r.id,
                email: r.email,
                name: r.name,
                roles: r.roles ?? [],
                tenantId: r.tenant_id,
                organizationId: r.organization_id,
                hasPassword: r.has_password,
                createdAt: r.created_at,
              },
            ],
      ),
    };
  }

  /**
   * A user that is not deleted, in the reach's tenant (every tenant: a super administrator). `lock`
   * holds the row until the transaction ends. Organizations are the caller's check: out of them is a
   * 403 for user management but a 404 for ACLs.
   */
  async findActive(db: Db, reach: TenantReach, input: { id: string; lock?: UserLock }): Promise<UserRecord | null> {
    const row = await queryOne<UserRecordRow>(
      db,
      `SELECT id, tenant_id, organization_id, email, password_hash IS NOT NULL AS has_password
         FROM users
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2) AND deleted_at IS NULL
        ${lockClause(input.lock)}`,
      [input.id, reach.tenantId],
    );
    return row
      ? { id: row.id, tenantId: row.tenant_id, organizationId: row.organization_id, email: row.email, hasPassword: row.has_password }
      : null;
  }

  /** The row by id, deleted or not, optionally locked as its writers lock it (snapshots before a write). */
  findStored(db: Db, input: { id: string; lock?: UserLock }): Promise<StoredUserRow | null> {
    return queryOne<StoredUserRow>(
      db,
      `SELECT id, tenant_id, organization_id, email, name, password_hash, created_at, deleted_at
         FROM users WHERE id = $1 ${lockClause(input.lock)}`,
      [input.id],
    );
  }

  /** The id of a user with this email in any tenant (the bootstrap's "is the admin there already?"). */
  async findIdByEmail(db: Db, email: string): Promise<string | null> {
    const row = await queryOne<{ id: string }>(db, 'SELECT id FROM users WHERE lower(email) = $1 AND deleted_at IS NULL LIMIT 1', [email]);
    return row?.id ?? null;
  }

  async emailTaken(db: Db, scope: TenantScope, input: { email: string; exceptUserId?: string | null }): Promise<boolean> {
    const row = await queryOne(
      db,
      `SELECT 1 FROM users
        WHERE tenant_id = $1 AND lower(email) = lower($2) AND deleted_at IS NULL AND ($3::uuid IS NULL OR id <> $3)`,
      [scope.tenantId, input.email, input.exceptUserId ?? null],
    );
    return row !== null;
  }

  /** Throws the driver's unique violation (users_tenant_email_uq) on a duplicate email. */
  async insert(db: Db, scope: TenantScope, user: NewUser): Promise<string> {
    const row = await queryOne<{ id: string }>(
      db,
      `INSERT INTO users (tenant_id, organization_id, email, name, password_hash)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [scope.tenantId, user.organizationId, user.email, user.name, user.passwordHash],
    );
    if (!row) throw new Error('user insert returned no row');
    return row.id;
  }

  async update(db: Db, scope: TenantScope, input: { id: string; patch: UserPatch }): Promise<void> {
    const { patch } = input;
    const entries = (Object.keys(PATCH_COLUMNS) as (keyof UserPatch)[]).filter((k) => patch[k] !== undefined);
    if (entries.length === 0) return;
    const sets = entries.map((k, i) => `${PATCH_COLUMNS[k]} = $${i + 3}`);
    await execute(db, `UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL`, [
      input.id,
      scope.tenantId,
      ...entries.map((k) => patch[k]),
    ]);
  }

  /** The soft delete's flag (the users service removes the rest: memberships, ACL, sessions, tokens). */
  async markDeleted(db: Db, scope: TenantScope, userId: string): Promise<void> {
    await execute(db, 'UPDATE users SET deleted_at = now(), updated_at = now() WHERE id = $1 AND tenant_id = $2', [userId, scope.tenantId]);
  }

  /** Undo and redo: the row back (deleted_at cleared) with these fields; the password column is never written. */
  async restore(
    db: Db,
    scope: TenantScope,
    user: { id: string; organizationId: string | null; email: string; name: string | null },
  ): Promise<void> {
    await execute(
      db,
      `UPDATE users SET organization_id = $3, email = $4, name = $5, deleted_at = NULL, updated_at = now()
        WHERE id = $1 AND tenant_id = $2`,
      [user.id, scope.tenantId, user.organizationId, user.email, user.name],
    );
  }

  /** Sets the email and/or the password hash (null keeps the current one); the resulting email, or null if gone. */
  async updateCredentials(
    db: Db,
    scope: TenantScope,
    input: { userId: string; email: string | null; passwordHash: string | null },
  ): Promise<string | null> {
    const row = await queryOne<{ email: string }>(
      db,
      `UPDATE users SET email = COALESCE($3, email), password_hash = COALESCE($4, password_hash), updated_at = now()
        WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL RETURNING email`,
      [input.userId, scope.tenantId, input.email, input.passwordHash],
    );
    return row?.email ?? null;
  }

  async setPassword(db: Db, scope: TenantScope, input: { userId: string; passwordHash: string }): Promise<void> {
    await execute(db, 'UPDATE users SET password_hash = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2', [
      input.userId,
      scope.tenantId,
      input.passwordHash,
    ]);
  }

  async setLocale(db: Db, scope: TenantScope, input: { userId: string; locale: string }): Promise<void> {
    await execute(db, 'UPDATE users SET locale = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2', [
      input.userId,
      scope.tenantId,
      input.locale,
    ]);
  }
}
