import { Injectable } from '@nestjs/common';
import { type Db, execute, likePattern, query, queryOne, SqlWhere } from '@app/service-kit';
import type { TenantReach } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

export interface OrganizationListItem {
  id: string;
  tenantId: string;
  tenantName: string;
  name: string;
  slug: string;
  isActive: boolean;
  usersCount: number;
  createdAt: string;
}

export interface OrganizationFilter {
  /** Super administrators' tenant filter (their reach is every tenant). */
  tenantId?: string;
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

interface OrganizationListRow {
  id: string;
  tenant_id: string;
  tenant_name: string;
  name: string;
  slug: string;
  is_active: boolean;
  created_at: Date;
  users_count: number;
}

/**
 * Every write of `organizations` (directory management, the bootstrap's `Default`), and the checks
 * other features make against them. Slugs are globally unique (the public lookup resolves one alone).
 */
@Injectable()
export class OrganizationsRepository {
  /** The reach's organizations (its tenant, and its organization restriction when it has one). */
  async list(db: Db, reach: TenantReach, input: OrganizationFilter): Promise<{ items: OrganizationListItem[]; total: number }> {
    const where = new SqlWhere();
    if (reach.tenantId !== null) where.add('o.tenant_id = ?', reach.tenantId);
    if (reach.organizationIds !== null) where.add('o.id = ANY(?::uuid[])', reach.organizationIds);
    if (input.tenantId) where.add('o.tenant_id = ?', input.tenantId);
    if (input.id) where.add('o.id = ?', input.id);
    if (input.search) where.add('(o.name ILIKE ? OR o.slug ILIKE ?)', likePattern(input.search));
    const limit = where.params.length + 1;
    const [rows, counted] = await Promise.all([
      query<OrganizationListRow>(
        db,
        `SELECT o.id, o.tenant_id, t.name AS tenant_name, o.name, o.slug, o.is_active, o.created_at,
                (SELECT count(*) FROM users u WHERE u.tenant_id = o.tenant_id AND u.organization_id = o.id AND u.deleted_at IS NULL)::int AS users_count
           FROM organizations o JOIN tenants t ON t.id = o.tenant_id
           ${where.whereClause()}
          ORDER BY lower(o.name), o.id
          LIMIT $${limit} OFFSET $${limit + 1}`,
        [...where.params, input.limit, input.offset],
      ),
      queryOne<{ total: number }>(db, `SELECT count(*)::int AS total FROM organizations o ${where.whereClause()}`, where.params),
    ]);
    const items = rows.map((r) => ({
      id: r.id,
      tenantId: r.tenant_id,
      tenantName: r.tenant_name,
      name: r.name,
      slug: r.slug,
      isActive: r.is_active,
      usersCount: r.users_count,
      createdAt: new Date(r.created_at).toISOString(),
    }));
    return { items, total: counted?.total ?? 0 };
  }

  /** Is the organization in the reach's tenant (any tenant's, for every tenant)? Organizations are the caller's check. */
  async existsInReach(db: Db, reach: TenantReach, id: string): Promise<boolean> {
    const row = await queryOne(db, 'SELECT id FROM organizations WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2)', [
      id,
      reach.tenantId,
    ]);
    return row !== null;
  }

  /** Those of `ids` that are not organizations of the scope's tenant. */
  async foreignIds(db: Db, scope: TenantScope, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows = await query<{ id: string }>(db, 'SELECT id FROM organizations WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [
      scope.tenantId,
      ids,
    ]);
    const known = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  }

  /** An active organization of an active tenant (the public lookup). */
  findActiveBySlug(db: Db, slug: string): Promise<{ id: string; name: string; slug: string } | null> {
    return queryOne<{ id: string; name: string; slug: string }>(
      db,
      `SELECT o.id, o.name, o.slug FROM organizations o JOIN tenants t ON t.id = o.tenant_id
        WHERE o.slug = $1 AND o.is_active AND t.is_active`,
      [slug],
    );
  }

  /** `base` and the `base-N` slugs already taken (in any tenant: slugs are global). */
  async takenSlugs(db: Db, base: string): Promise<string[]> {
    const rows = await query<{ slug: string }>(db, `SELECT slug FROM organizations WHERE slug = $1 OR slug ~ ('^' || $1 || '-[0-9]+$')`, [
      base,
    ]);
    return rows.map((r) => r.slug);
  }

  /** The new id, or null when the slug is taken. */
  async insert(db: Db, scope: TenantScope, input: { name: string; slug: string }): Promise<string | null> {
    const row = await queryOne<{ id: string }>(
      db,
      `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, $2, $3) ON CONFLICT (slug) DO NOTHING RETURNING id`,
      [scope.tenantId, input.name, input.slug],
    );
    return row?.id ?? null;
  }

  /** The organization with this slug, created in the scope's tenant when no organization has it (the bootstrap). */
  async upsertBySlug(db: Db, scope: TenantScope, input: { name: string; slug: string }): Promise<string> {
    const row = await queryOne<{ id: string }>(
      db,
      `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, $2, $3)
       ON CONFLICT (slug) DO UPDATE SET slug = EXCLUDED.slug RETURNING id`,
      [scope.tenantId, input.name, input.slug],
    );
    if (!row) throw new Error('organization upsert returned no row');
    return row.id;
  }

  /** Null keeps a value. Throws the driver's unique violation on a slug already taken. */
  async update(
    db: Db,
    reach: TenantReach,
    input: { id: string; name: string | null; slug: string | null; isActive: boolean | null },
  ): Promise<void> {
    await execute(
      db,
      `UPDATE organizations SET name = COALESCE($3, name), slug = COALESCE($4, slug), is_active = COALESCE($5, is_active),
              updated_at = now()
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2)`,
      [input.id, reach.tenantId, input.name, input.slug, input.isActive],
    );
  }

  /** Locks the organization until the transaction ends; its tenant, or null when there is none. */
  async lock(db: Db, id: string): Promise<string | null> {
    const row = await queryOne<{ tenant_id: string }>(db, 'SELECT tenant_id FROM organizations WHERE id = $1 FOR UPDATE', [id]);
    return row?.tenant_id ?? null;
  }

  async hasUsers(db: Db, scope: TenantScope, id: string): Promise<boolean> {
    const row = await queryOne(db, 'SELECT 1 FROM users WHERE tenant_id = $1 AND organization_id = $2 AND deleted_at IS NULL LIMIT 1', [
      scope.tenantId,
      id,
    ]);
    return row !== null;
  }

  async delete(db: Db, id: string): Promise<void> {
    await execute(db, 'DELETE FROM organizations WHERE id = $1', [id]);
  }
}
