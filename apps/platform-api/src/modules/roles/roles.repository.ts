import { Injectable } from '@nestjs/common';
import { type Db, execute, likePattern, query, queryOne, queryPrepared } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import type { RequestedAcl } from '../../core/auth/grant-boundary.js';
import type { TenantReach } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** A role: of one tenant, or global (`tenantId` null) and usable in every tenant. */
export interface RoleRow {
  id: string;
  name: string;
  tenantId: string | null;
}

export interface RoleListRow extends RoleRow {
  tenantName: string | null;
  usersCount: number;
}

export interface RoleListFilter {
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

/** A role usable in a tenant, with its ACL in that tenant (null: no ACL there, so it grants nothing). */
export interface AssignableRole {
  id: string;
  name: string;
  acl: RequestedAcl | null;
}

/** `update` also makes concurrent membership inserts (their foreign-key check) wait; `no key update` only serialises writers of the role and its ACLs. */
export type RoleLock = 'update' | 'no key update';

interface RoleListDbRow {
  total: number;
  id: string | null;
  name: string;
  tenant_id: string | null;
  tenant_name: string | null;
  users_count: number;
}

interface AssignableRoleRow {
  id: string;
  name: string;
  acl_id: string | null;
  is_super_admin: boolean | null;
  features: string[] | null;
  organizations: string[] | null;
}

/**
 * A role as the action log records it: the row, its ACLs and its memberships, so an undo of a delete
 * brings back exactly what was there and an undo of a create notices later members. `$2` scopes the
 * ACLs and memberships to one tenant (null: every tenant): a global role has both in every tenant, and
 * an entry written by a tenant administrator records only its own tenant's (SnapshotScope).
 * One statement, so the command bus can fold the "after" snapshot into the log INSERT (`snapshotSql`).
 */
export const ROLE_SNAPSHOT_SQL = `
  SELECT jsonb_build_object(
           'id', r.id, 'tenantId', r.tenant_id, 'name', r.name,
           'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'acls', COALESCE((SELECT jsonb_agg(jsonb_build_object('tenantId', a.tenant_id, 'isSuperAdmin', a.is_super_admin,
                                                                 'features', a.features, 'organizations', a.organizations)
                                              ORDER BY a.tenant_id)
                               FROM role_acls a WHERE a.role_id = r.id AND ($2::uuid IS NULL OR a.tenant_id = $2::uuid)), '[]'::jsonb),
           'members', COALESCE((SELECT jsonb_agg(jsonb_build_object('userId', m.user_id, 'tenantId', m.tenant_id) ORDER BY m.user_id)
                                  FROM user_roles m WHERE m.role_id = r.id AND ($2::uuid IS NULL OR m.tenant_id = $2::uuid)), '[]'::jsonb)) AS snapshot
    FROM roles r WHERE r.id = $1`;

/**
 * Every write of `roles` and of memberships (`user_roles`): role management, user management's role
 * assignments, the bootstrap, undo and redo. A role's ACLs are RoleAclRepository's.
 */
@Injectable()
export class RolesRepository {
  /**
   * One statement: the roles usable in the reach's tenant (its own and the global ones; every role for
   * every tenant), their number, and one page with per-role membership counts in that tenant
   * (memberships of deleted users are not counted). Always answers the total, even past the last page.
   */
  async list(db: Db, reach: TenantReach, filter: RoleListFilter): Promise<{ total: number; items: RoleListRow[] }> {
    const rows = await query<RoleListDbRow>(
      db,
      `WITH visible AS (
         SELECT r.id, r.name, r.tenant_id
           FROM roles r
          WHERE ($1::uuid IS NULL OR r.tenant_id = $1 OR r.tenant_id IS NULL)
            AND ($2::uuid IS NULL OR r.id = $2)
            AND ($3::text IS NULL OR r.name ILIKE $3)
       ),
       counted AS (SELECT count(*)::int AS total FROM visible),
       page AS (SELECT * FROM visible ORDER BY lower(name), id LIMIT $4 OFFSET $5),
       members AS (
         SELECT ur.role_id, count(*)::int AS users_count
           FROM user_roles ur
           JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL
          WHERE ur.role_id IN (SELECT id FROM page)
            AND ($1::uuid IS NULL OR ur.tenant_id = $1)
          GROUP BY ur.role_id
       )
       SELECT c.total, p.id, p.name, p.tenant_id, t.name AS tenant_name, COALESCE(m.users_count, 0) AS users_count
         FROM counted c
         LEFT JOIN page p ON true
         LEFT JOIN tenants t ON t.id = p.tenant_id
         LEFT JOIN members m ON m.role_id = p.id
        ORDER BY lower(p.name), p.id`,
      [reach.tenantId, filter.id ?? null, filter.search ? likePattern(filter.search) : null, filter.limit, filter.offset],
    );
    return {
      total: rows[0]?.total ?? 0,
      items: rows.flatMap((r) =>
        r.id === null ? [] : [{ id: r.id, name: r.name, tenantId: r.tenant_id, tenantName: r.tenant_name, usersCount: r.users_count }],
      ),
    };
  }

  /** The role if it is usable in the reach's tenant (its own role, or a global one); every role for every tenant. */
  async findInScope(db: Db, reach: TenantReach, input: { id: string; lock?: RoleLock }): Promise<RoleRow | null> {
    const row = await queryOne<{ id: string; name: string; tenant_id: string | null }>(
      db,
      `SELECT id, name, tenant_id FROM roles
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2 OR tenant_id IS NULL)
        ${input.lock ? `FOR ${input.lock.toUpperCase()}` : ''}`,
      [input.id, reach.tenantId],
    );
    return row ? { id: row.id, name: row.name, tenantId: row.tenant_id } : null;
  }

  /**
   * The role (as `findInScope`) with its version: `updated_at` in epoch milliseconds. Roles have no
   * version column; every write of the row (rename, restore) sets `updated_at`. `lock` when the caller
   * already holds the row (a command's snapshot) or must.
   */
  async findVersioned(db: Db, reach: TenantReach, input: { id: string; lock?: RoleLock }): Promise<(RoleRow & { version: number }) | null> {
    const row = await queryOne<{ id: string; name: string; tenant_id: string | null; version: number }>(
      db,
      `SELECT id, name, tenant_id, floor(extract(epoch FROM updated_at) * 1000)::float8 AS version FROM roles
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2 OR tenant_id IS NULL)
        ${input.lock ? `FOR ${input.lock.toUpperCase()}` : ''}`,
      [input.id, reach.tenantId],
    );
    return row ? { id: row.id, name: row.name, tenantId: row.tenant_id, version: row.version } : null;
  }

  /**
   * A new role owned by `tenantId` (null: a global role, which belongs to no tenant's scope). Throws the
   * driver's unique violation (roles_tenant_name_uq) on a duplicate name in the same owner.
   */
  async insert(db: Db, role: { tenantId: string | null; name: string }): Promise<string> {
    const row = await queryOne<{ id: string }>(db, 'INSERT INTO roles (tenant_id, name) VALUES ($1, $2) RETURNING id', [
      role.tenantId,
      role.name,
    ]);
    if (!row) throw new Error('role insert returned no row');
    return row.id;
  }

  /** The scope's role with this name, created when missing (the bootstrap's `superadmin`). */
  async upsertByName(db: Db, scope: TenantScope, name: string): Promise<string> {
    const row = await queryOne<{ id: string }>(
      db,
      `INSERT INTO roles (tenant_id, name) VALUES ($1, $2)
       ON CONFLICT (COALESCE(tenant_id, '00000000-0000-0000-0000-000000000000'::uuid), lower(name))
       DO UPDATE SET name = roles.name RETURNING id`,
      [scope.tenantId, name],
    );
    if (!row) throw new Error('role upsert returned no row');
    return row.id;
  }

  async rename(db: Db, input: { role: RoleRow; name: string }): Promise<void> {
    await execute(db, `UPDATE roles SET name = $3, updated_at = now() WHERE id = $1 AND tenant_id IS NOT DISTINCT FROM $2`, [
      input.role.id,
      input.role.tenantId,
      input.name,
    ]);
  }

  /** Memberships of users that are not deleted; a tenant role's memberships all live in its tenant. */
  async countAssignedUsers(db: Db, role: RoleRow): Promise<number> {
    const row = await queryOne<{ n: number }>(
      db,
      `SELECT count(*)::int AS n
         FROM user_roles ur
         JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL
        WHERE ur.role_id = $1 AND ($2::uuid IS NULL OR ur.tenant_id = $2)`,
      [role.id, role.tenantId],
    );
    return row?.n ?? 0;
  }

  /** Cascades to the role's ACLs, its leftover memberships (deleted users) and its sidebar preferences. */
  async delete(db: Db, role: RoleRow): Promise<void> {
    await execute(db, 'DELETE FROM roles WHERE id = $1 AND tenant_id IS NOT DISTINCT FROM $2', [role.id, role.tenantId]);
  }

  // ---- memberships (user_roles) ---------------------------------------------------------------

  /** Of `roleIds`, those usable in the scope's tenant (its own roles and global roles), each with its ACL there. */
  async assignable(db: Db, scope: TenantScope, roleIds: string[]): Promise<AssignableRole[]> {
    if (roleIds.length === 0) return [];
    const rows = await query<AssignableRoleRow>(
      db,
      `SELECT r.id, r.name, ra.id AS acl_id, ra.is_super_admin, ra.features, ra.organizations
         FROM roles r
         LEFT JOIN role_acls ra ON ra.tenant_id = $1 AND ra.role_id = r.id
        WHERE r.id = ANY($2::uuid[]) AND (r.tenant_id = $1 OR r.tenant_id IS NULL)`,
      [scope.tenantId, roleIds],
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      acl: r.acl_id ? { isSuperAdmin: Boolean(r.is_super_admin), features: r.features ?? [], organizations: r.organizations } : null,
    }));
  }

  /** Does any of the user's roles carry a super-administrator ACL in the scope's tenant? */
  async holdsSuperAdminRole(db: Db, scope: TenantScope, userId: string): Promise<boolean> {
    const row = await queryOne(
      db,
      `SELECT 1 FROM user_roles ur
         JOIN role_acls ra ON ra.role_id = ur.role_id AND ra.tenant_id = ur.tenant_id
        WHERE ur.tenant_id = $1 AND ur.user_id = $2 AND ra.is_super_admin
        LIMIT 1`,
      [scope.tenantId, userId],
    );
    return row !== null;
  }

  /** Adds memberships in the scope's tenant (one multi-row insert). */
  async addMemberships(db: Db, scope: TenantScope, input: { userId: string; roleIds: string[] }): Promise<void> {
    if (input.roleIds.length === 0) return;
    await execute(
      db,
      `INSERT INTO user_roles (tenant_id, user_id, role_id)
       SELECT $1, $2, role_id FROM unnest($3::uuid[]) AS role_id`,
      [scope.tenantId, input.userId, input.roleIds],
    );
  }

  /** Replaces the user's memberships in the scope's tenant with `roleIds`. */
  async replaceMemberships(db: Db, scope: TenantScope, input: { userId: string; roleIds: string[] }): Promise<void> {
    await this.deleteMembershipsOfUser(db, scope, input.userId);
    await this.addMemberships(db, scope, input);
  }

  async deleteMembershipsOfUser(db: Db, scope: TenantScope, userId: string): Promise<void> {
    await execute(db, 'DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2', [scope.tenantId, userId]);
  }

  /**
   * Undo and redo of a user: drops the memberships not in `roleIds`, adds the missing ones (of roles that
   * still exist); the rest stay as they are.
   */
  async restoreMembershipsOfUser(db: Db, scope: TenantScope, input: { userId: string; roleIds: string[] }): Promise<void> {
    await execute(db, 'DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2 AND role_id <> ALL($3::uuid[])', [
      scope.tenantId,
      input.userId,
      input.roleIds,
    ]);
    await execute(
      db,
      `INSERT INTO user_roles (tenant_id, user_id, role_id)
       SELECT $1, $2, r.id FROM roles r WHERE r.id = ANY($3::uuid[])
       ON CONFLICT (user_id, role_id) DO NOTHING`,
      [scope.tenantId, input.userId, input.roleIds],
    );
  }

  /** The user's role ids in the scope's tenant, sorted (the user snapshot). */
  async roleIdsOfUser(db: Db, scope: TenantScope, userId: string): Promise<string[]> {
    const rows = await query<{ role_id: string }>(
      db,
      'SELECT role_id FROM user_roles WHERE tenant_id = $1 AND user_id = $2 ORDER BY role_id',
      [scope.tenantId, userId],
    );
    return rows.map((r) => r.role_id);
  }

  // ---- snapshots and restores (action log) ------------------------------------------------------

  /** The role snapshot (ROLE_SNAPSHOT_SQL); `forUpdate` also locks the row (NO KEY UPDATE: memberships may still be added). */
  async snapshot(db: Db, input: { id: string; tenantId: string | null; forUpdate?: boolean }): Promise<Snapshot | null> {
    const [row] = await queryPrepared<{ snapshot: Snapshot }>(
      db,
      `${ROLE_SNAPSHOT_SQL} ${input.forUpdate ? 'FOR NO KEY UPDATE OF r' : ''}`,
      [input.id, input.tenantId],
    );
    return row?.snapshot ?? null;
  }

  /** Locks the role as writers of its ACLs do (an ACL write's snapshot, before it reads). */
  async lockForAclWrite(db: Db, roleId: string): Promise<void> {
    await execute(db, 'SELECT 1 FROM roles WHERE id = $1 FOR NO KEY UPDATE', [roleId]);
  }

  /** Undo of a create, redo of a delete: deletes the role (cascading), only if owned by `tenantId` when given. */
  async deleteForRestore(db: Db, input: { id: string; tenantId: string | null }): Promise<void> {
    await execute(db, 'DELETE FROM roles WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [input.id, input.tenantId]);
  }

  /** Brings the role row back (or makes it equal to the snapshot's). */
  async upsertForRestore(db: Db, role: { id: string; tenantId: string | null; name: string; createdAt: string }): Promise<void> {
    await execute(
      db,
      `INSERT INTO roles (id, tenant_id, name, created_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, name = EXCLUDED.name, updated_at = now()`,
      [role.id, role.tenantId, role.name, role.createdAt],
    );
  }

  /** Makes the role's memberships (in `tenantId`; every tenant when null) equal to `members`, of users that still exist. */
  async replaceMembersForRestore(
    db: Db,
    input: { roleId: string; tenantId: string | null; members: { userId: string; tenantId: string }[] },
  ): Promise<void> {
    await execute(db, 'DELETE FROM user_roles WHERE role_id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [
      input.roleId,
      input.tenantId,
    ]);
    await execute(
      db,
      `INSERT INTO user_roles (user_id, role_id, tenant_id)
       SELECT m."userId", $1, m."tenantId" FROM jsonb_to_recordset($2::jsonb) AS m("userId" uuid, "tenantId" uuid)
        WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = m."userId")`,
      [input.roleId, JSON.stringify(input.members)],
    );
  }
}
