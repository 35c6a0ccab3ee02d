import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { likePattern } from '@app/service-kit';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';

/** Anything that runs SQL: the DataSource, or a transaction's EntityManager. */
export interface Queryable {
  query(sql: string, params?: unknown[]): Promise<any>;
}

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
  /** The tenant whose own roles are listed, with the global roles; null: every role (super administrator, no filter). */
  ownerTenantId: string | null;
  /** Memberships counted in this tenant only; null: in every tenant. */
  countTenantId: string | null;
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

/** SQL of roles and memberships. Every statement is scoped by a tenant unless the caller is a super administrator. */
@Injectable()
export class RolesRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One statement: the filtered set, its size, and one page with per-role membership counts
   * (memberships of deleted users are not counted). Always answers the total, even past the last page.
   */
  async list(filter: RoleListFilter): Promise<{ total: number; items: RoleListRow[] }> {
    const rows: {
      total: number;
      id: string | null;
      name: string;
      tenant_id: string | null;
      tenant_name: string | null;
      users_count: number;
    }[] = await this.dataSource.query(
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
            AND ($6::uuid IS NULL OR ur.tenant_id = $6)
          GROUP BY ur.role_id
       )
       SELECT c.total, p.id, p.name, p.tenant_id, t.name AS tenant_name, COALESCE(m.users_count, 0) AS users_count
         FROM counted c
         LEFT JOIN page p ON true
         LEFT JOIN tenants t ON t.id = p.tenant_id
         LEFT JOIN members m ON m.role_id = p.id
        ORDER BY lower(p.name), p.id`,
      [
        filter.ownerTenantId,
        filter.id ?? null,
        filter.search ? likePattern(filter.search) : null,
        filter.limit,
        filter.offset,
        filter.countTenantId,
      ],
    );
    return {
      total: rows[0]?.total ?? 0,
      items: rows
        .filter((r) => r.id !== null)
        .map((r) => ({
          id: r.id as string,
          name: r.name,
          tenantId: r.tenant_id,
          tenantName: r.tenant_name,
          usersCount: r.users_count,
        })),
    };
  }

  /**
   * The role if it is usable in `tenantId` (its own role, or a global one); `tenantId` null: any role
   * (a super administrator). `lock`: `update` also makes concurrent membership inserts (their foreign-key
   * check) wait for our commit; `no key update` only serialises writers of the role and its ACLs.
   */
  async findInScope(db: Queryable, roleId: string, tenantId: string | null, lock?: 'update' | 'no key update'): Promise<RoleRow | null> {
    const rows: { id: string; name: string; tenant_id: string | null }[] = await db.query(
      `SELECT id, name, tenant_id FROM roles
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2 OR tenant_id IS NULL)
        ${lock ? `FOR ${lock.toUpperCase()}` : ''}`,
      [roleId, tenantId],
    );
    return rows[0] ? { id: rows[0].id, name: rows[0].name, tenantId: rows[0].tenant_id } : null;
  }

  async tenantExists(db: Queryable, tenantId: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM tenants WHERE id = $1', [tenantId]);
    return rows.length > 0;
  }

  /** Throws the driver's unique violation (roles_tenant_name_uq) on a duplicate name in the same scope. */
  async insert(db: Queryable, tenantId: string | null, name: string): Promise<string> {
    const [row] = await db.query('INSERT INTO roles (tenant_id, name) VALUES ($1, $2) RETURNING id', [tenantId, name]);
    return row.id;
  }

  async rename(db: Queryable, role: RoleRow, name: string): Promise<void> {
    await db.query(`UPDATE roles SET name = $3, updated_at = now() WHERE id = $1 AND tenant_id IS NOT DISTINCT FROM $2`, [
      role.id,
      role.tenantId,
      name,
    ]);
  }

  /** Memberships of users that are not deleted; a tenant role's memberships all live in its tenant. */
  async countAssignedUsers(db: Queryable, role: RoleRow): Promise<number> {
    const [row] = await db.query(
      `SELECT count(*)::int AS n
         FROM user_roles ur
         JOIN users u ON u.id = ur.user_id AND u.deleted_at IS NULL
        WHERE ur.role_id = $1 AND ($2::uuid IS NULL OR ur.tenant_id = $2)`,
      [role.id, role.tenantId],
    );
    return row.n;
  }

  /** Cascades to the role's ACLs, its leftover memberships (deleted users) and its sidebar preferences. */
  async delete(db: Queryable, role: RoleRow): Promise<void> {
    await db.query('DELETE FROM roles WHERE id = $1 AND tenant_id IS NOT DISTINCT FROM $2', [role.id, role.tenantId]);
  }
}
