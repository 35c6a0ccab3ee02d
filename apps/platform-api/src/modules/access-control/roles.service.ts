import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { assertMayManage } from '../../core/auth/grant-boundary.js';
import { ROLES_PAGE_SIZE_DEFAULT, type RoleListDto } from './access-control.dto.js';
import { AclsRepository } from './acls.repository.js';
import { isUniqueViolation, type Queryable, RolesRepository, type RoleRow } from './roles.repository.js';

const ROLE_NAME_UNIQUE_INDEX = 'roles_tenant_name_uq';

export interface RoleListQuery {
  id?: string;
  page?: number;
  pageSize?: number;
  search?: string;
  tenantId?: string;
}

/**
 * Roles: a tenant's own roles, and global roles (tenant null) usable in every tenant. Callers see
 * their tenant's roles and the global ones; super administrators see every role. Another tenant's
 * role is a 404; a global role (and a super-administrator role) is changed by super administrators only.
 */
@Injectable()
export class RolesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly roles: RolesRepository,
    private readonly acls: AclsRepository,
    private readonly cache: AccessCacheService,
  ) {}

  async list(auth: AuthContext, query: RoleListQuery): Promise<RoleListDto> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? ROLES_PAGE_SIZE_DEFAULT;
    const result = { items: [] as RoleListDto['items'], total: 0, page, pageSize, totalPages: 1 };
    // A tenant filter naming someone else's tenant finds nothing (and says nothing about that tenant).
    if (!auth.isSuperAdmin && query.tenantId && query.tenantId !== auth.tenantId) return result;
    const tenantId = auth.isSuperAdmin ? (query.tenantId ?? null) : auth.tenantId;
    const search = query.search?.trim();
    const { total, items } = await this.roles.list({
      ownerTenantId: tenantId,
      countTenantId: tenantId,
      id: query.id,
      search: search || undefined,
      limit: pageSize,
      offset: (page - 1) * pageSize,
    });
    return { ...result, items, total, totalPages: Math.max(1, Math.ceil(total / pageSize)) };
  }

  async create(auth: AuthContext, input: { name: string; tenantId?: string | null }): Promise<{ id: string }> {
    let tenantId: string | null;
    if (auth.isSuperAdmin) {
      tenantId = input.tenantId ?? null;
    } else {
      if (input.tenantId && input.tenantId !== auth.tenantId) {
        throw DomainError.forbidden('only a super administrator may create roles in another tenant');
      }
      tenantId = auth.tenantId;
    }
    const id = await this.dataSource.transaction(async (tx) => {
      if (tenantId && tenantId !== auth.tenantId && !(await this.roles.tenantExists(tx, tenantId))) {
        throw DomainError.badRequest('tenant not found');
      }
      return withUniqueName(() => this.roles.insert(tx, tenantId, input.name));
    });
    await this.cache.invalidateAcls();
    return { id };
  }

  async update(auth: AuthContext, input: { id: string; name?: string }): Promise<{ ok: true }> {
    const changed = await this.dataSource.transaction(async (tx) => {
      const role = await this.findManageable(tx, auth, input.id, 'no key update');
      if (input.name === undefined || input.name === role.name) return false;
      await withUniqueName(() => this.roles.rename(tx, role, input.name as string));
      return true;
    });
    // Role names are part of every resolved ACL (and of the JWT's `roles` at the next login).
    if (changed) await this.cache.invalidateAcls();
    return { ok: true };
  }

  async remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    await this.dataSource.transaction(async (tx) => {
      // FOR UPDATE: a membership inserted concurrently waits for us, then fails its foreign key.
      const role = await this.findManageable(tx, auth, id, 'update');
      if ((await this.roles.countAssignedUsers(tx, role)) > 0) throw DomainError.badRequest('role has assigned users');
      await this.roles.delete(tx, role);
    });
    await this.cache.invalidateAcls();
    return { ok: true };
  }

  /** The role, locked, if the caller may rename or delete it: 404 out of scope, 403 global or super-administrator role. */
  private async findManageable(
    tx: Queryable,
    auth: AuthContext,
    id: string,
    lock: 'update' | 'no key update',
  ): Promise<RoleRow> {
    const role = await this.roles.findInScope(tx, id, auth.isSuperAdmin ? null : auth.tenantId, lock);
    if (!role) throw DomainError.notFound('role not found');
    if (auth.isSuperAdmin) return role;
    if (role.tenantId === null) throw DomainError.forbidden('only a super administrator may change a global role');
    assertMayManage(auth, await this.acls.roleAcl(tx, role.tenantId, role.id));
    return role;
  }
}

/** Runs an insert or rename, turning the unique-name violation into a 400. */
async function withUniqueName<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err, ROLE_NAME_UNIQUE_INDEX)) throw DomainError.badRequest('role name already exists');
    throw err;
  }
}
