import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError, likePattern, SqlWhere } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import type { CreateTenantDto, DirectoryListQueryDto, Paged, UpdateTenantDto } from './directory.dto.js';
import { pageOf, paged } from './paging.js';

export interface TenantListItem {
  id: string;
  name: string;
  isActive: boolean;
  organizationsCount: number;
  usersCount: number;
  createdAt: string;
}

/**
 * Tenant management. Super administrators see and manage every tenant; anyone else holding
 * directory.tenants.manage sees and may rename only its own. Creating, deleting and (de)activating
 * tenants is for super administrators.
 */
@Injectable()
export class TenantsService {
  constructor(private readonly dataSource: DataSource) {}

  async list(auth: AuthContext, query: DirectoryListQueryDto): Promise<Paged<TenantListItem>> {
    const { page, pageSize, offset } = pageOf(query);
    const filter = new SqlWhere();
    if (!auth.isSuperAdmin) filter.add('t.id = ?', auth.tenantId);
    if (query.id) filter.add('t.id = ?', query.id);
    if (query.search?.trim()) filter.add(`t.name ILIKE ?`, likePattern(query.search.trim()));
    const limit = filter.params.length + 1;
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `SELECT t.id, t.name, t.is_active, t.created_at,
                (SELECT count(*) FROM organizations o WHERE o.tenant_id = t.id)::int AS organizations_count,
                (SELECT count(*) FROM users u WHERE u.tenant_id = t.id AND u.deleted_at IS NULL)::int AS users_count
           FROM tenants t ${filter.whereClause()}
          ORDER BY lower(t.name), t.id
          LIMIT $${limit} OFFSET $${limit + 1}`,
        [...filter.params, pageSize, offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM tenants t ${filter.whereClause()}`, filter.params),
    ]);
    const items = rows.map((r: Record<string, unknown>) => ({
      id: r.id as string,
      name: r.name as string,
      isActive: r.is_active as boolean,
      organizationsCount: r.organizations_count as number,
      usersCount: r.users_count as number,
      createdAt: new Date(r.created_at as string).toISOString(),
    }));
    return paged(items, total, page, pageSize);
  }

  async create(auth: AuthContext, input: CreateTenantDto): Promise<{ id: string }> {
    if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may create tenants');
    const [tenant] = await this.dataSource.query('INSERT INTO tenants (name) VALUES ($1) RETURNING id', [input.name]);
    return { id: tenant.id };
  }

  async update(auth: AuthContext, input: UpdateTenantDto): Promise<{ ok: true }> {
    if (input.name === undefined && input.isActive === undefined) throw DomainError.badRequest('nothing to update: give name or isActive');
    if (!auth.isSuperAdmin && input.id !== auth.tenantId) throw DomainError.notFound('tenant not found');
    if (input.isActive !== undefined && !auth.isSuperAdmin) {
      throw DomainError.forbidden('only super administrators may activate or deactivate tenants');
    }
    if (input.isActive === false && input.id === auth.tenantId) throw DomainError.badRequest('cannot deactivate your own tenant');
    const [, affected] = await this.dataSource.query(
      `UPDATE tenants SET name = COALESCE($2, name), is_active = COALESCE($3, is_active), updated_at = now() WHERE id = $1`,
      [input.id, input.name ?? null, input.isActive ?? null],
    );
    if (!affected) throw DomainError.notFound('tenant not found');
    return { ok: true };
  }

  /** Deletes an empty tenant (its organizations, roles and settings go with it). */
  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may delete tenants');
    if (id === auth.tenantId) throw DomainError.badRequest('cannot delete your own tenant');
    return this.dataSource.transaction(async (tx) => {
      const [tenant] = await tx.query('SELECT id FROM tenants WHERE id = $1 FOR UPDATE', [id]);
      if (!tenant) throw DomainError.notFound('tenant not found');
      const [users] = await tx.query('SELECT 1 FROM users WHERE tenant_id = $1 AND deleted_at IS NULL LIMIT 1', [id]);
      if (users) throw DomainError.badRequest('tenant still has users');
      await tx.query('DELETE FROM tenants WHERE id = $1', [id]);
      return { ok: true as const };
    });
  }
}
