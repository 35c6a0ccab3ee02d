import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';
import { reachOf, scopeIn } from '../../core/scope/tenant-reach.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import type { CreateOrganizationDto, OrganizationListQueryDto, Paged, UpdateOrganizationDto } from './directory.dto.js';
import { lowestFreeSlug, slugFromName } from './organization-slug.js';
import { type OrganizationListItem, OrganizationsRepository } from './organizations.repository.js';
import { pageOf, paged } from './paging.js';
import { TenantsRepository } from './tenants.repository.js';

const SLUG_ATTEMPTS = 5;

/**
 * Organization management, scoped to the caller's tenant (super administrators: every tenant).
 * Another tenant's organization is a 404; one outside the caller's organization restriction is a
 * 403 and is left out of the list. Slugs are globally unique: an explicit slug already taken is a
 * 400; a slug derived from the name gets the lowest free `-2`, `-3`, ... suffix.
 */
@Injectable()
export class OrganizationsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsRepository,
    private readonly tenants: TenantsRepository,
  ) {}

  async list(auth: AuthContext, query: OrganizationListQueryDto): Promise<Paged<OrganizationListItem>> {
    const { page, pageSize, offset } = pageOf(query);
    const { items, total } = await this.organizations.list(this.dataSource, reachOf(auth), {
      tenantId: query.tenantId,
      id: query.id,
      search: query.search?.trim() || undefined,
      limit: pageSize,
      offset,
    });
    return paged(items, total, page, pageSize);
  }

  async create(auth: AuthContext, input: CreateOrganizationDto): Promise<{ id: string }> {
    const tenantId = input.tenantId ?? auth.tenantId;
    if (tenantId !== auth.tenantId) {
      if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may create organizations in another tenant');
      if (!(await this.tenants.exists(this.dataSource, tenantId))) throw DomainError.notFound('tenant not found');
    }
    const scope = scopeIn(auth, tenantId);
    if (input.slug) {
      const id = await this.organizations.insert(this.dataSource, scope, { name: input.name, slug: input.slug });
      if (!id) throw DomainError.badRequest('slug already in use');
      return { id };
    }
    // Another request may take the chosen slug between the read and the insert: pick again.
    const base = slugFromName(input.name);
    for (let attempt = 0; attempt < SLUG_ATTEMPTS; attempt += 1) {
      const slug = lowestFreeSlug(base, await this.organizations.takenSlugs(this.dataSource, base));
      const id = await this.organizations.insert(this.dataSource, scope, { name: input.name, slug });
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
      await this.organizations.update(this.dataSource, reachOf(auth), {
        id: input.id,
        name: input.name ?? null,
        slug: input.slug ?? null,
        isActive: input.isActive ?? null,
      });
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
      const tenantId = await this.organizations.lock(tx, id);
      if (!tenantId) throw DomainError.notFound('organization not found');
      if (await this.organizations.hasUsers(tx, systemScope(tenantId), id)) throw DomainError.badRequest('organization still has users');
      await this.organizations.delete(tx, id);
      return { ok: true as const };
    });
  }

  private async requireInScope(auth: AuthContext, id: string): Promise<void> {
    if (!(await this.organizations.existsInReach(this.dataSource, reachOf(auth), id))) throw DomainError.notFound('organization not found');
    if (!auth.canAccessOrganization(id)) throw DomainError.forbidden('organization outside your access');
  }
}
