import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { reachOf } from '../../core/scope/tenant-reach.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { AttachmentStorageCleanup } from '../attachments/attachment-storage-cleanup.service.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import type { CreateTenantDto, DirectoryListQueryDto, Paged, UpdateTenantDto } from './directory.dto.js';
import { pageOf, paged } from './paging.js';
import { TenantsRepository } from './tenants.repository.js';

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
  constructor(
    private readonly dataSource: DataSource,
    private readonly tenants: TenantsRepository,
    private readonly sessions: SessionsRepository,
    private readonly cache: AccessCacheService,
    private readonly attachmentStorage: AttachmentStorageCleanup,
  ) {}

  async list(auth: AuthContext, query: DirectoryListQueryDto): Promise<Paged<TenantListItem>> {
    const { page, pageSize, offset } = pageOf(query);
    const { rows, total } = await this.tenants.list(this.dataSource, reachOf(auth), {
      id: query.id,
      search: query.search?.trim() || undefined,
      limit: pageSize,
      offset,
    });
    const items = rows.map((r) => ({ ...r, createdAt: r.createdAt.toISOString() }));
    return paged(items, total, page, pageSize);
  }

  async create(auth: AuthContext, input: CreateTenantDto): Promise<{ id: string }> {
    if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may create tenants');
    return { id: await this.tenants.create(this.dataSource, input.name) };
  }

  /**
   * Deactivation stops logins into the tenant and ends its sessions, in the same transaction (as a
   * user's soft delete ends the user's), so no token, refresh token or session cookie of it works
   * again, even after a re-activation; every instance drops them from its cache and closes their event
   * streams (the same pub/sub as a logout).
   */
  async update(auth: AuthContext, input: UpdateTenantDto): Promise<{ ok: true }> {
    if (input.name === undefined && input.isActive === undefined) throw DomainError.badRequest('nothing to update: give name or isActive');
    if (!auth.isSuperAdmin && input.id !== auth.tenantId) throw DomainError.notFound('tenant not found');
    if (input.isActive !== undefined && !auth.isSuperAdmin) {
      throw DomainError.forbidden('only super administrators may activate or deactivate tenants');
    }
    if (input.isActive === false && input.id === auth.tenantId) throw DomainError.badRequest('cannot deactivate your own tenant');
    const found = await this.dataSource.transaction(async (tx) => {
      if (!(await this.tenants.update(tx, { id: input.id, name: input.name ?? null, isActive: input.isActive ?? null }))) return false;
      if (input.isActive === false) await this.sessions.deleteOfTenant(tx, systemScope(input.id));
      return true;
    });
    if (!found) throw DomainError.notFound('tenant not found');
    if (input.isActive === false) await this.cache.invalidateTenant(input.id);
    return { ok: true };
  }

  /**
   * Deletes an empty tenant (its organizations, roles, settings and attachment rows go with it). The
   * attachments' stored bytes are recorded for removal in the same transaction, and the worker
   * removes them (retrying until the storage confirms: AttachmentStorageCleanup).
   */
  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    if (!auth.isSuperAdmin) throw DomainError.forbidden('only super administrators may delete tenants');
    if (id === auth.tenantId) throw DomainError.badRequest('cannot delete your own tenant');
    await this.dataSource.transaction(async (tx) => {
      if (!(await this.tenants.lock(tx, id))) throw DomainError.notFound('tenant not found');
      if (await this.tenants.hasUsers(tx, id)) throw DomainError.badRequest('tenant still has users');
      await this.attachmentStorage.enqueueTenant(tx, systemScope(id));
      await this.tenants.delete(tx, id);
    });
    await this.attachmentStorage.kick();
    return { ok: true };
  }
}
