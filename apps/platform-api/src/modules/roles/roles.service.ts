import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { assertMayManage, checkGrant } from '../../core/auth/grant-boundary.js';
import type { CommandDefinition, RestorePlan, Snapshot, SnapshotScope } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';
import { reachOf, scopeIn } from '../../core/scope/tenant-reach.js';
import { TenantsRepository } from '../directory/tenants.repository.js';
import { RoleAclRepository } from './role-acl.repository.js';
import { changedRoleAcls, RoleSnapshots } from './role-snapshot.js';
import { ROLES_PAGE_SIZE_DEFAULT, type RoleListDto } from './roles.dto.js';
import { type RoleLock, ROLE_SNAPSHOT_SQL, RolesRepository, type RoleRow } from './roles.repository.js';

const ROLE_NAME_UNIQUE_INDEX = 'roles_tenant_name_uq';
const ROLE_FIELDS = ['id', 'name', 'usersCount', 'tenantId', 'tenantName'];

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
    private readonly roleAcls: RoleAclRepository,
    private readonly tenants: TenantsRepository,
    private readonly snapshots: RoleSnapshots,
    private readonly cache: AccessCacheService,
    private readonly bus: CommandBus,
    private readonly accessLog: AccessLogService,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.createCommand, this.updateCommand, this.deleteCommand);
  }

  /**
   * What every role command shares: its feature, its snapshot and inverse, and ACL cache invalidation
   * after commit. A tenant administrator's entries hold its tenant's part of the role only (it changes
   * its tenant's roles alone); a super administrator's the whole role, which an undo of a global role's
   * delete needs back.
   */
  private readonly roleCommandBase = {
    resourceKind: 'auth.role',
    features: ['auth.roles.manage'],
    snapshotScope: (auth: AuthContext) => ({ tenantId: auth.isSuperAdmin ? null : auth.tenantId }),
    snapshot: (tx: EntityManager, roleId: string, options?: { forUpdate?: boolean; tenantId?: string | null }) =>
      this.snapshots.snapshotRole(tx, roleId, options),
    snapshotSql: ROLE_SNAPSHOT_SQL,
    restore: (tx: EntityManager, roleId: string, snapshot: Snapshot | null, scope?: SnapshotScope) =>
      this.snapshots.restoreRole(tx, roleId, snapshot, scope),
    authorizeRestore: (_tx: unknown, auth: AuthContext, plan: RestorePlan) => Promise.resolve(authorizeRoleRestore(auth, plan)),
    afterCommit: () => this.cache.invalidateAcls(),
  };

  private readonly createCommand: CommandDefinition<{ name: string; tenantId: string | null }, { id: string }> = {
    ...this.roleCommandBase,
    id: 'auth.roles.create',
    label: 'Create role',
    actionType: 'create',
    event: 'auth.role.created',
    execute: async (tx, auth, input) => {
      if (input.tenantId && input.tenantId !== auth.tenantId && !(await this.tenants.exists(tx, input.tenantId))) {
        throw DomainError.badRequest('tenant not found');
      }
      const id = await withUniqueName(() => this.roles.insert(tx, { tenantId: input.tenantId, name: input.name }));
      return { resourceId: id, result: { id } };
    },
  };

  private readonly updateCommand: CommandDefinition<{ id: string; name?: string; expectedVersion?: number }, { ok: true }> = {
    ...this.roleCommandBase,
    id: 'auth.roles.update',
    label: 'Edit role',
    actionType: 'edit',
    event: 'auth.role.updated',
    targetId: (input) => input.id,
    execute: async (tx, auth, input, before) => {
      // The bus's locked snapshot is the role as it stands: no second read of the row.
      const role = await this.checkManageable(tx, auth, before && roleInScope(auth, before));
      if (input.expectedVersion !== undefined) {
        // The row is locked by the bus's snapshot: the version read here is the one the rename replaces.
        const current = await this.roles.findVersioned(tx, reachOf(auth), { id: role.id });
        if (current?.version !== input.expectedVersion)
          throw new DomainError(ErrorCode.PreconditionFailed, 'the role changed since it was read');
      }
      if (input.name !== undefined && input.name !== role.name) {
        await withUniqueName(() => this.roles.rename(tx, { role, name: input.name as string }));
      }
      return { resourceId: role.id, result: { ok: true } };
    },
  };

  private readonly deleteCommand: CommandDefinition<{ id: string }, { ok: true }> = {
    ...this.roleCommandBase,
    id: 'auth.roles.delete',
    label: 'Delete role',
    actionType: 'delete',
    event: 'auth.role.deleted',
    targetId: (input) => input.id,
    execute: async (tx, auth, input) => {
      // FOR UPDATE: a membership inserted concurrently waits for us, then fails its foreign key.
      const role = await this.findManageable(tx, auth, input.id, 'update');
      if ((await this.roles.countAssignedUsers(tx, role)) > 0) throw DomainError.badRequest('role has assigned users');
      await this.roles.delete(tx, role);
      return { resourceId: role.id, result: { ok: true } };
    },
  };

  async list(auth: AuthContext, query: RoleListQuery): Promise<RoleListDto> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? ROLES_PAGE_SIZE_DEFAULT;
    const result = { items: [] as RoleListDto['items'], total: 0, page, pageSize, totalPages: 1 };
    // A tenant filter naming someone else's tenant finds nothing (and says nothing about that tenant).
    if (!auth.isSuperAdmin && query.tenantId && query.tenantId !== auth.tenantId) return result;
    // A super administrator's tenant filter narrows its reach (every tenant) to that tenant.
    const reach = auth.isSuperAdmin && query.tenantId ? scopeIn(auth, query.tenantId) : reachOf(auth);
    const search = query.search?.trim();
    const { total, items } = await this.roles.list(this.dataSource, reach, {
      id: query.id,
      search: search || undefined,
      limit: pageSize,
      offset: (page - 1) * pageSize,
    });
    this.accessLog.record(auth, {
      resourceKind: 'auth.role',
      resourceId: query.id,
      accessType: 'read:list',
      fields: ROLE_FIELDS,
      context: { page, pageSize, returned: items.length, search: search || undefined, tenantId: reach.tenantId ?? 'all' },
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
    return this.bus.execute(auth, this.createCommand, { name: input.name, tenantId });
  }

  update(auth: AuthContext, input: { id: string; name?: string }): Promise<{ ok: true }> {
    return this.bus.execute(auth, this.updateCommand, input);
  }

  /**
   * A rename that applies only while the role's version (`updated_at`, epoch ms) is still
   * `expectedVersion`: 412 otherwise (a confirmed AI assistant mutation previewed earlier).
   */
  renameAtVersion(auth: AuthContext, input: { id: string; name: string; expectedVersion: number }): Promise<{ ok: true }> {
    return this.bus.execute(auth, this.updateCommand, input);
  }

  /** The role as the caller sees it (404 outside its scope), with its version (`findVersioned`). */
  async findVersioned(auth: AuthContext, id: string): Promise<RoleRow & { version: number }> {
    const role = await this.roles.findVersioned(this.dataSource, reachOf(auth), { id });
    if (!role) throw DomainError.notFound('role not found');
    return role;
  }

  remove(auth: AuthContext, id: string): Promise<{ ok: true }> {
    return this.bus.execute(auth, this.deleteCommand, { id });
  }

  /** The role, locked, if the caller may rename or delete it: 404 out of scope, 403 global or super-administrator role. */
  private async findManageable(tx: EntityManager, auth: AuthContext, id: string, lock: RoleLock): Promise<RoleRow> {
    return this.checkManageable(tx, auth, await this.roles.findInScope(tx, reachOf(auth), { id, lock }));
  }

  private async checkManageable(tx: EntityManager, auth: AuthContext, role: RoleRow | null): Promise<RoleRow> {
    if (!role) throw DomainError.notFound('role not found');
    if (auth.isSuperAdmin) return role;
    if (role.tenantId === null) throw DomainError.forbidden('only a super administrator may change a global role');
    assertMayManage(auth, await this.roleAcls.find(tx, scopeIn(auth, role.tenantId), role.id));
    return role;
  }
}

/** The snapshot's role if the caller's scope (`RolesRepository.findInScope`) includes it: its tenant's roles and global ones. */
function roleInScope(auth: AuthContext, snapshot: Snapshot): RoleRow | null {
  const role = { id: snapshot.id as string, name: snapshot.name as string, tenantId: snapshot.tenantId as string | null };
  return auth.isSuperAdmin || role.tenantId === null || role.tenantId === auth.tenantId ? role : null;
}

/**
 * Undo and redo of a role command, by the rules of the commands themselves: a caller who is not a super
 * administrator changes roles of its own tenant only (a global role is 403, another tenant's 404), never
 * a super-administrator role, and brings back no ACL beyond what it may grant now (403).
 */
function authorizeRoleRestore(auth: AuthContext, plan: RestorePlan): void {
  if (auth.isSuperAdmin) return;
  for (const snapshot of [plan.current, plan.target]) {
    if (!snapshot) continue;
    if (snapshot.tenantId === null) throw DomainError.forbidden('only a super administrator may change a global role');
    if (snapshot.tenantId !== auth.tenantId) throw DomainError.notFound('role not found');
  }
  for (const acl of (plan.current?.acls ?? []) as { isSuperAdmin: boolean }[]) assertMayManage(auth, acl);
  for (const { target } of changedRoleAcls(plan.current, plan.target)) {
    if (target && checkGrant(auth, target).exceeded) {
      throw DomainError.forbidden('cannot restore a role whose ACL grants access beyond your own');
    }
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
