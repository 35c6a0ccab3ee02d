import { Injectable } from '@nestjs/common';
import { type Db, execute, likePattern, query, queryOne, SqlWhere } from '@app/service-kit';
import type { TenantReach } from '../../core/scope/tenant-reach.js';

export interface TenantRow {
  id: string;
  name: string;
  isActive: boolean;
  organizationsCount: number;
  usersCount: number;
  createdAt: Date;
}

export interface TenantFilter {
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

interface TenantListDbRow {
  id: string;
  name: string;
  is_active: boolean;
  created_at: Date;
  organizations_count: number;
  users_count: number;
}

/**
 * Every write of `tenants` (directory management, the bootstrap's `Default`). A tenant is the scope
 * itself, so these statements take its id; lists take the caller's reach (its own tenant, or all).
 */
@Injectable()
export class TenantsRepository {
  async list(db: Db, reach: TenantReach, input: TenantFilter): Promise<{ rows: TenantRow[]; total: number }> {
    const where = new SqlWhere();
    if (reach.tenantId !== null) where.add('t.id = ?', reach.tenantId);
    if (input.id) where.add('t.id = ?', input.id);
    if (input.search) where.add(`t.name ILIKE ?`, likePattern(input.search));
    const limit = where.params.length + 1;
    const [rows, counted] = await Promise.all([
      query<TenantListDbRow>(
        db,
        `SELECT t.id, t.name, t.is_active, t.created_at,
                (SELECT count(*) FROM organizations o WHERE o.tenant_id = t.id)::int AS organizations_count,
                (SELECT count(*) FROM users u WHERE u.tenant_id = t.id AND u.deleted_at IS NULL)::int AS users_count
           FROM tenants t ${where.whereClause()}
          ORDER BY lower(t.name), t.id
          LIMIT $${limit} OFFSET $${limit + 1}`,
        [...where.params, input.limit, input.offset],
      ),
      queryOne<{ total: number }>(db, `SELECT count(*)::int AS total FROM tenants t ${where.whereClause()}`, where.params),
    ]);
    return {
      rows: rows.map((r) => ({
        id: r.id,
        name: r.name,
        isActive: r.is_active,
        organizationsCount: r.organizations_count,
        usersCount: r.users_count,
        createdAt: new Date(r.created_at),
      })),
      total: counted?.total ?? 0,
    };
  }

  async exists(db: Db, id: string): Promise<boolean> {
    return (await queryOne(db, 'SELECT 1 FROM tenants WHERE id = $1', [id])) !== null;
  }

  /** An active tenant (the public lookup). */
  findActive(db: Db, id: string): Promise<{ id: string; name: string } | null> {
    return queryOne<{ id: string; name: string }>(db, 'SELECT id, name FROM tenants WHERE id = $1 AND is_active', [id]);
  }

  /** The oldest tenant of this name (the bootstrap's `Default`). */
  async findIdByName(db: Db, name: string): Promise<string | null> {
    const row = await queryOne<{ id: string }>(db, 'SELECT id FROM tenants WHERE name = $1 ORDER BY created_at LIMIT 1', [name]);
    return row?.id ?? null;
  }

  async create(db: Db, name: string): Promise<string> {
    const row = await queryOne<{ id: string }>(db, 'INSERT INTO tenants (name) VALUES ($1) RETURNING id', [name]);
    if (!row) throw new Error('tenant insert returned no row');
    return row.id;
  }

  /** Renames and/or (de)activates (null keeps the value); false when there is no such tenant. */
  async update(db: Db, input: { id: string; name: string | null; isActive: boolean | null }): Promise<boolean> {
    const affected = await execute(
      db,
      `UPDATE tenants SET name = COALESCE($2, name), is_active = COALESCE($3, is_active), updated_at = now() WHERE id = $1`,
      [input.id, input.name, input.isActive],
    );
    return affected > 0;
  }

  /** Locks the tenant until the transaction ends (a delete checks it is empty first); false when there is none. */
  async lock(db: Db, id: string): Promise<boolean> {
    return (await queryOne(db, 'SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [id])) !== null;
  }

  async hasUsers(db: Db, id: string): Promise<boolean> {
    return (await queryOne(db, 'SELECT 1 FROM users WHERE tenant_id = $1 AND deleted_at IS NULL LIMIT 1', [id])) !== null;
  }

  /** Cascades to its organizations, roles and settings. */
  async delete(db: Db, id: string): Promise<void> {
    await execute(db, 'DELETE FROM tenants WHERE id = $1', [id]);
  }
}
