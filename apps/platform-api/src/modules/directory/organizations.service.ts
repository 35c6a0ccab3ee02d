import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError, likePattern, SqlWhere } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import type { CreateOrganizationDto, OrganizationListQueryDto, Paged, UpdateOrganizationDto } from './directory.dto.js';
import { lowestFreeSlug, slugFromName } from './organization-slug.js';
import { pageOf, paged } from './paging.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';

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

const SLUG_ATTEMPTS = 5;

/**
 * Organization management, scoped to the caller's tenant (super administrators: every tenant).
 * Another tenant's organization is a 404; one outside the caller's organization restriction is a
 * 403 and is left out of the list. Slugs are globally unique: an explicit slug already taken is a
 * 400; a slug derived from the name gets the lowest free `-2`, `-3`, ... suffix.
 */
@Injectable()
export class OrganizationsService {
  constructor(private readonly dataSource: DataSource) {}

  async list(auth: AuthContext, query: OrganizationListQueryDto): Promise<Paged<OrganizationListItem>> {
    const { page, pageSize, offset } = pageOf(query);
    const filter = new SqlWhere();
    if (!auth.isSuperAdmin) filter.add('o.tenant_id = ?', auth.tenantId);
    if (!auth.isSuperAdmin && auth.acl.organizations !== null) filter.add('o.id = ANY(?::uuid[])', auth.acl.organizations);
    if (query.tenantId) filter.add('o.tenant_id = ?', query.tenantId);
    if (query.id) filter.add('o.id = ?', query.id);
    if (query.search?.trim()) filter.add('(o.name ILIKE ? OR o.slug ILIKE ?)', likePattern(query.search.trim()));
    const limit = filter.params.length + 1;
    const [rows, [{ total }]] = await Promise.all([
      this.dataSource.query(
        `SELECT o.id, o.tenant_id, t.name AS tenant_name, o.name, o.slug, o.is_active, o.created_at,
                (SELECT count(*) FROM users u WHERE u.tenant_id = o.tenant_id AND u.organization_id = o.id AND u.deleted_at IS NULL)::int AS users_count
           FROM organizations o JOIN tenants t ON t.id = o.tenant_id
           ${filter.whereClause()}
          ORDER BY lower(o.name), o.id
          LIMIT $${limit} OFFSET $${limit + 1}`,
        [...filter.params, pageSize, offset],
      ),
      this.dataSource.query(`SELECT count(*)::int AS total FROM organizations o ${filter.whereClause()}`, filter.params),
    ]);
    const items = rows.map((r: Record<string, unknown>) => ({
      id: r.id as string,
      tenantId: r.tenant_id as string,
      tenantName: r.tenant_name as string,
      name: r.name as string,
      slug: r.slug as string,
      isActive: r.is_active as boolean,
      usersCount: r.users_count as number,
      createdAt: new Date(r.created_at as string).toISOString(),
    }));
    return paged(items, total, page, pageSize);
  }

  async create(auth: AuthContext, input: CreateOrganizationDto): Promise<{ id: string }> {
    const tenantId = input.tenantId ?? auth.tenantId;
    if (tenantId !== auth.tenantId) {
      if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may create organizations in another tenant');
      const [tenant] = await this.dataSource.query('SELECT id FROM tenants WHERE id = $1', [tenantId]);
      if (!tenant) throw DomainError.notFound('tenant not found');
    }
    if (input.slug) {
      const id = await this.insert(this.dataSource.manager, tenantId, input.name, input.slug);
      if (!id) throw DomainError.badRequest('slug already in use');
      return { id };
    }
    // Another request may take the chosen slug between the read and the insert: pick again.
    const base = slugFromName(input.name);
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt += 1) {
      const taken: { slug: string }[] = await this.dataSource.query(
        `SELECT slug FROM organizations WHERE slug = $1 OR slug ~ ('^' || $1 || '-[0-9]+$')`,
        [base],
      );
      const id = await this.insert(
        this.dataSource.manager,
        tenantId,
        input.name,
        lowestFreeSlug(
          base,
          taken.map((r) => r.slug),
        ),
      );
      if (id) return { id };
    }
    throw DomainError.conflict('could not allocate a unique slug, try again');
  }

  async update(auth: AuthContext, input: UpdateOrganizationDto): Promise<{ ok: true }> {
    if (input.name === undefined && input.slug === undefined && input.isActive === undefined) {
      throw DomainError.badRequest('nothing to update: give name, slug or isActive');
    }
    await this.requireInScope(auth, input.id);
    try {
      await this.dataSource.query(
        `UPDATE organizations SET name = COALESCE($2, name), slug = COALESCE($3, slug), is_active = COALESCE($4, is_active),
                updated_at = now()
          WHERE id = $1`,
        [input.id, input.name ?? null, input.slug ?? null, input.isActive ?? null],
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw DomainError.badRequest('slug already in use');
      throw error;
    }
    return { ok: true };
  }

  /** Deletes an organization nobody belongs to any more. */
  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    await this.requireInScope(auth, id);
    return this.dataSource.transaction(async (tx) => {
      const [org] = await tx.query('SELECT tenant_id FROM organizations WHERE id = $1 FOR UPDATE', [id]);
      if (!org) throw DomainError.notFound('organization not found');
      const [member] = await tx.query('SELECT 1 FROM users WHERE tenant_id = $1 AND organization_id = $2 AND deleted_at IS NULL LIMIT 1', [
        org.tenant_id,
        id,
      ]);
      if (member) throw DomainError.badRequest('organization still has users');
      await tx.query('DELETE FROM organizations WHERE id = $1', [id]);
      return { ok: true as const };
    });
  }

  private async requireInScope(auth: AuthContext, id: string): Promise<void> {
    const [org] = await this.dataSource.query('SELECT id FROM organizations WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2)', [
      id,
      auth.isSuperAdmin ? null : auth.tenantId,
    ]);
    if (!org) throw DomainError.notFound('organization not found');
    if (!auth.canAccessOrganization(id)) throw DomainError.forbidden('organization outside your access');
  }

  /** The new id, or null when the slug is taken. */
  private async insert(db: EntityManager, tenantId: string, name: string, slug: string): Promise<string | null> {
    const rows: { id: string }[] = await db.query(
      `INSERT INTO organizations (tenant_id, name, slug) VALUES ($1, $2, $3) ON CONFLICT (slug) DO NOTHING RETURNING id`,
      [tenantId, name, slug],
    );
    return rows[0]?.id ?? null;
  }
}
