import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { RequestedAcl } from '../../core/auth/grant-boundary.js';
import { likePattern } from '@app/service-kit';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';

/** Anything that runs SQL: the DataSource, or a transaction's EntityManager. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

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
  /** null: every tenant (a super administrator without a tenant filter). */
  tenantId: string | null;
  /** null: no organization restriction; else only users of these organizations. */
  visibleOrganizations: string[] | null;
  id?: string;
  search?: string;
  roleId?: string;
  organizationId?: string;
  limit: number;
  offset: number;
}

/** A role usable in a tenant, with its ACL in that tenant (null: no ACL there, so it grants nothing). */
export interface AssignableRole {
  id: string;
  name: string;
  acl: RequestedAcl | null;
}

export interface UserPatch {
  email?: string;
  name?: string | null;
  passwordHash?: string;
  organizationId?: string | null;
}

const PATCH_COLUMNS: Record<keyof UserPatch, string> = {
  email: 'email',
  name: 'name',
  passwordHash: 'password_hash',
  organizationId: 'organization_id',
};

/** SQL of users and their memberships. Every statement names the tenant it acts in. */
@Injectable()
export class UsersRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One statement: the filtered set, its size, and one page whose roles are aggregated with
   * json_agg (no query per user). Answers the total even past the last page.
   */
  async list(filter: UserListFilter): Promise<{ total: number; items: UserListRow[] }> {
    const rows: {
      total: number;
      id: string | null;
      email: string;
      name: string | null;
      tenant_id: string;
      organization_id: string | null;
      has_password: boolean;
      created_at: Date;
      roles: { id: string; name: string }[] | null;
    }[] = await this.dataSource.query(
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
        filter.tenantId,
        filter.visibleOrganizations,
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
      items: rows
        .filter((r) => r.id !== null)
        .map((r) => ({
          id: r.id as string,
          email: r.email,
          name: r.name,
          roles: r.roles ?? [],
          tenantId: r.tenant_id,
          organizationId: r.organization_id,
          hasPassword: r.has_password,
          createdAt: r.created_at,
        })),
    };
  }

  /**
   * A user that is not deleted, in `tenantId` (null: any tenant, for a super administrator).
   * `lock` holds the row until the transaction ends, so concurrent edits of one user serialize.
   */
  async findActive(db: Queryable, userId: string, tenantId: string | null, lock = false): Promise<UserRecord | null> {
    const rows: { id: string; tenant_id: string; organization_id: string | null; email: string; has_password: boolean }[] = await db.query(
      `SELECT id, tenant_id, organization_id, email, password_hash IS NOT NULL AS has_password
         FROM users
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2) AND deleted_at IS NULL
        ${lock ? 'FOR UPDATE' : ''}`,
      [userId, tenantId],
    );
    const row = rows[0];
    return row
      ? { id: row.id, tenantId: row.tenant_id, organizationId: row.organization_id, email: row.email, hasPassword: row.has_password }
      : null;
  }

  async tenantExists(db: Queryable, tenantId: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId]);
    return rows.length > 0;
  }

  async organizationInTenant(db: Queryable, organizationId: string, tenantId: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM organizations WHERE id = $1 AND tenant_id = $2', [organizationId, tenantId]);
    return rows.length > 0;
  }

  async emailTaken(db: Queryable, tenantId: string, email: string, exceptUserId: string | null = null): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM users
        WHERE tenant_id = $1 AND lower(email) = $2 AND deleted_at IS NULL AND ($3::uuid IS NULL OR id <> $3)`,
      [tenantId, email, exceptUserId],
    );
    return rows.length > 0;
  }

  /** Of `roleIds`, those usable in `tenantId` (its own roles and global roles), each with its ACL there. */
  async assignableRoles(db: Queryable, tenantId: string, roleIds: string[]): Promise<AssignableRole[]> {
    if (roleIds.length === 0) return [];
    const rows: {
      id: string;
      name: string;
      acl_id: string | null;
      is_super_admin: boolean | null;
      features: string[] | null;
      organizations: string[] | null;
    }[] = await db.query(
      `SELECT r.id, r.name, ra.id AS acl_id, ra.is_super_admin, ra.features, ra.organizations
         FROM roles r
         LEFT JOIN role_acls ra ON ra.tenant_id = $1 AND ra.role_id = r.id
        WHERE r.id = ANY($2::uuid[]) AND (r.tenant_id = $1 OR r.tenant_id IS NULL)`,
      [tenantId, roleIds],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      acl: r.acl_id ? { isSuperAdmin: Boolean(r.is_super_admin), features: r.features ?? [], organizations: r.organizations } : null,
    }));
  }

  /** Throws the driver's unique violation (users_tenant_email_uq) on a duplicate email. */
  async insert(
    db: Queryable,
    user: { tenantId: string; organizationId: string | null; email: string; name: string | null; passwordHash: string | null },
  ): Promise<string> {
    const [row] = await db.query(
      `INSERT INTO users (tenant_id, organization_id, email, name, password_hash)
       VALUES ($1, $2, $3, $4, $5) RETURNING id`,
      [user.tenantId, user.organizationId, user.email, user.name, user.passwordHash],
    );
    return row.id;
  }

  async update(db: Queryable, user: UserRecord, patch: UserPatch): Promise<void> {
    const entries = (Object.keys(PATCH_COLUMNS) as (keyof UserPatch)[]).filter((k) => patch[k] !== undefined);
    if (entries.length === 0) return;
    const sets = entries.map((k, i) => `${PATCH_COLUMNS[k]} = $${i + 3}`);
    await db.query(`UPDATE users SET ${sets.join(', ')}, updated_at = now() WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL`, [
      user.id,
      user.tenantId,
      ...entries.map((k) => patch[k]),
    ]);
  }

  /** Replaces the user's memberships in its tenant with `roleIds` (one multi-row insert). */
  async replaceRoles(db: Queryable, user: UserRecord, roleIds: string[]): Promise<void> {
    await db.query('DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2', [user.tenantId, user.id]);
    await this.addRoles(db, user.tenantId, user.id, roleIds);
  }

  async addRoles(db: Queryable, tenantId: string, userId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    await db.query(
      `INSERT INTO user_roles (tenant_id, user_id, role_id)
       SELECT $1, $2, role_id FROM unnest($3::uuid[]) AS role_id`,
      [tenantId, userId, roleIds],
    );
  }

  /**
   * Soft delete: marks the user deleted and removes what would keep granting access or let someone
   * take the account over: memberships, the user ACL, sessions and unused reset/setup tokens.
   */
  async softDelete(db: Queryable, user: Pick<UserRecord, 'id' | 'tenantId'>): Promise<void> {
    await db.query('UPDATE users SET deleted_at = now(), updated_at = now() WHERE id = $1 AND tenant_id = $2', [user.id, user.tenantId]);
    await db.query('DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2', [user.tenantId, user.id]);
    await db.query('DELETE FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [user.tenantId, user.id]);
    await db.query('UPDATE auth_tokens SET used_at = now() WHERE tenant_id = $1 AND user_id = $2 AND used_at IS NULL', [
      user.tenantId,
      user.id,
    ]);
    await db.query('DELETE FROM sessions WHERE tenant_id = $1 AND user_id = $2', [user.tenantId, user.id]);
  }
}
