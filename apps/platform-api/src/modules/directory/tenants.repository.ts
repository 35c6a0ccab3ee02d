import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError, likePattern, SqlWhere } from '@app/service-kit';

export interface TenantRow {
  id: string;
  name: string;
  isActive: boolean;
  organizationsCount: number;
  usersCount: number;
  createdAt: Date;
}

export interface TenantFilter {
  /** null: every tenant. */
  onlyId: string | null;
  id?: string;
  search?: string;
  limit: number;
  offset: number;
}

/** All SQL of `tenants` (directory management). */
@Injectable()
export class TenantsRepository {
  constructor(private readonly dataSource: DataSource) {}

  async list(query: TenantFilter): Promise<{ rows: TenantRow[]; total: number }> {
    const filter = new SqlWhere();
    if (query.onlyId) filter.add('t.id = ?', query.onlyId);
    if (query.id) filter.add('t.id = ?', query.id);
    if (query.search) filter.add(`t.name ILIKE ?`, likePattern(query.search));
    const limit = filter.params.length + 1;
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `SELECT t.id, t.name, t.is_active, t.created_at,
                (SELECT count(*) FROM organizations o WHERE o.tenant_id = t.id)::int AS organizations_count,
                (SELECT count(*) FROM users u WHERE u.tenant_id = t.id AND u.deleted_at IS NULL)::int AS users_count
           FROM tenants t ${filter.whereClause()}
          ORDER BY lower(t.name), t.id
          LIMIT $${limit} OFFSET $${limit + 1}`,
        [...filter.params, query.limit, query.offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM tenants t ${filter.whereClause()}`, filter.params),
    ]);
    return {
      rows: rows.map((r: Record<string, unknown>) => ({
        id: r.id as string,
        name: r.name as string,
        isActive: r.is_active as boolean,
        organizationsCount: r.organizations_count as number,
        usersCount: r.users_count as number,
        createdAt: new Date(r.created_at as string),
      })),
      total,
    };
  }

  async create(name: string): Promise<string> {
    const [tenant] = await this.dataSource.query('INSERT INTO tenants (name) VALUES ($1) RETURNING id', [name]);
    return tenant.id;
  }

  /**
   * Renames and/or (de)activates; false when there is no such tenant. Deactivation deletes the
   * tenant's sessions in the same transaction (as a user's soft delete deletes the user's), so no
   * token, refresh token or session cookie of it works again, even after a re-activation.
   */
  async update(id: string, change: { name: string | null; isActive: boolean | null }): Promise<boolean> {
    return this.dataSource.transaction(async (tx) => {
      const [, affected]: [unknown, number] = await tx.query(
        `UPDATE tenants SET name = COALESCE($2, name), is_active = COALESCE($3, is_active), updated_at = now() WHERE id = $1`,
        [id, change.name, change.isActive],
      );
      if (!affected) return false;
      if (change.isActive === false) await tx.query('DELETE FROM sessions WHERE tenant_id = $1', [id]);
      return true;
    });
  }

  /** Deletes an empty tenant (its organizations, roles and settings go with it); 404/400 otherwise. */
  async removeEmpty(id: string): Promise<void> {
    await this.dataSource.transaction(async (tx) => {
      const [tenant] = await tx.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [id]);
      if (!tenant) throw DomainError.notFound('tenant not found');
      const [users] = await tx.query('SELECT 1 FROM users WHERE tenant_id = $1 AND deleted_at IS NULL LIMIT 1', [id]);
      if (users) throw DomainError.badRequest('tenant still has users');
      await tx.query('DELETE FROM tenants WHERE id = $1', [id]);
    });
  }
}
