import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { type Db, DomainError } from '@app/service-kit';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import type { CommandDefinition, RestorePlan, Snapshot, SnapshotScope } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { assertMayManage, checkGrant } from '../../core/auth/grant-boundary.js';
import { scopeIn } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { OrganizationsRepository } from '../directory/organizations.repository.js';
import { TenantsRepository } from '../directory/tenants.repository.js';
import { RoleAclRepository, type StoredAcl } from './role-acl.repository.js';
import { changedRoleAcls, RoleSnapshots } from './role-snapshot.js';
import { ROLE_SNAPSHOT_SQL, RolesRepository } from './roles.repository.js';

export const NO_ACL: StoredAcl = { isSuperAdmin: false, features: [], organizations: null };
export const ACL_FIELDS = ['isSuperAdmin', 'features', 'organizations'];
/** The feature of every ACL route, so of the ACL commands and their undo and redo. */
export const ACL_MANAGE = 'auth.acl.manage';

export interface RoleAclInput {
  roleId: string;
  features: string[];
  isSuperAdmin?: boolean;
  organizations?: string[] | null;
  tenantId?: string;
}

/**
 * Role ACLs (per tenant and role), within the grant boundary of decisions.md "Features and ACL". Every
 * write invalidates the resolved-ACL caches of all instances once committed.
 */
@Injectable()
export class RoleAclService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly roles: RolesRepository,
    private readonly roleAcls: RoleAclRepository,
    private readonly tenants: TenantsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly snapshots: RoleSnapshots,
    private readonly cache: AccessCacheService,
    private readonly accessLog: AccessLogService,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.roleAclCommand);
  }

  /**
   * PUT /auth/roles/acl: recorded as the role with its ACL and members in the tenant whose ACL is
   * written (never the other tenants' of a global role); undo restores that ACL.
   */
  private readonly roleAclCommand: CommandDefinition<
    { roleId: string; tenantId?: string; requested: StoredAcl },
    { ok: true; sanitized: false }
  > = {
    id: 'auth.roles.acl.update',
    label: 'Edit role ACL',
    actionType: 'edit',
    resourceKind: 'auth.role',
    features: [ACL_MANAGE],
    targetId: (input) => input.roleId,
    // Only a super administrator names another tenant (aclScope: 404 for anyone else).
    snapshotScope: (auth, input) => ({ tenantId: auth.isSuperAdmin ? (input.tenantId ?? auth.tenantId) : auth.tenantId }),
    snapshot: (tx, roleId, options) => this.snapshots.snapshotRoleForAcl(tx, roleId, options),
    snapshotSql: ROLE_SNAPSHOT_SQL,
    restore: (tx: EntityManager, roleId: string, snapshot: Snapshot | null, scope?: SnapshotScope) =>
      this.snapshots.restoreRoleAcls(tx, roleId, snapshot, scope),
    authorizeRestore: (_tx, auth, plan) => Promise.resolve(authorizeRoleAclRestore(auth, plan)),
    afterCommit: () => this.cache.invalidateAcls(),
    execute: async (tx, auth, input) => {
      const scope = await this.aclScope(tx, auth, input.tenantId);
      // Locks the role: concurrent writers of its ACL run one after the other.
      const role = await this.roles.findInScope(tx, scope, { id: input.roleId, lock: 'no key update' });
      if (!role) throw DomainError.notFound('role not found');
      assertMayManage(auth, await this.roleAcls.find(tx, scope, role.id));
      if (checkGrant(auth, input.requested).exceeded) {
        throw DomainError.forbidden('cannot grant super administrator access, features or organizations beyond your own');
      }
      await this.assertOrganizationsOfTenant(tx, scope, input.requested.organizations);
      await this.roleAcls.upsert(tx, scope, { roleId: role.id, acl: input.requested });
      return { resourceId: role.id, result: { ok: true, sanitized: false } };
    },
  };

  async getRoleAcl(auth: AuthContext, input: { roleId: string; tenantId?: string }): Promise<StoredAcl> {
    const db = this.dataSource;
    const scope = await this.aclScope(db, auth, input.tenantId);
    const role = await this.roles.findInScope(db, scope, { id: input.roleId });
    if (!role) throw DomainError.notFound('role not found');
    const acl = await this.roleAcls.find(db, scope, role.id);
    assertMayManage(auth, acl);
    this.accessLog.record(auth, {
      resourceKind: 'auth.role_acl',
      resourceId: role.id,
      accessType: 'read',
      fields: ACL_FIELDS,
      context: { tenantId: scope.tenantId },
    });
    return acl ?? NO_ACL;
  }

  /**
   * Replaces the role's ACL in the tenant; asking for more than the caller may grant is a 403. Runs as
   * the undoable command `auth.roles.acl.update` (the ACL cache is invalidated after its commit).
   */
  putRoleAcl(auth: AuthContext, input: RoleAclInput): Promise<{ ok: true; sanitized: false }> {
    const requested: StoredAcl = {
      isSuperAdmin: input.isSuperAdmin ?? false,
      features: unique(input.features),
      // Omitted: the caller's own restriction (null, no restriction, for unrestricted callers), so a
      // restricted caller's write never lifts it; an explicit null from it is beyond the boundary (403).
      organizations: input.organizations === undefined ? auth.acl.organizations : input.organizations && unique(input.organizations),
    };
    return this.bus.execute(auth, this.roleAclCommand, { roleId: input.roleId, tenantId: input.tenantId, requested });
  }

  /**
   * The tenant whose role ACL is read or written: the caller's by default. Only a super administrator
   * may name another (an existing) tenant; for anyone else it is a 404, as if the role did not exist.
   */
  private async aclScope(db: Db, auth: AuthContext, tenantId: string | undefined): Promise<TenantScope> {
    if (!tenantId || tenantId === auth.tenantId) return scopeIn(auth, auth.tenantId);
    if (!auth.isSuperAdmin) throw DomainError.notFound('role not found');
    if (!(await this.tenants.exists(db, tenantId))) throw DomainError.notFound('tenant not found');
    return scopeIn(auth, tenantId);
  }

  private async assertOrganizationsOfTenant(db: Db, scope: TenantScope, organizations: string[] | null): Promise<void> {
    const foreign = await this.organizations.foreignIds(db, scope, organizations ?? []);
    if (foreign.length) throw DomainError.badRequest(`organizations not found in the tenant: ${foreign.join(', ')}`);
  }
}

export function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * Undo and redo of a role ACL write, by the rules of PUT /auth/roles/acl: every ACL the restore changes
 * must be of the caller's tenant, not a super administrator's now (403), and within what the caller
 * may grant now (403). Super administrators may restore any.
 */
function authorizeRoleAclRestore(auth: AuthContext, plan: RestorePlan): void {
  if (auth.isSuperAdmin) return;
  for (const { tenantId, current, target } of changedRoleAcls(plan.current, plan.target)) {
    if (tenantId !== auth.tenantId) throw DomainError.forbidden('only a super administrator may change a role’s ACL in another tenant');
    assertMayManage(auth, current);
    if (target && checkGrant(auth, target).exceeded) {
      throw DomainError.forbidden(
        'cannot restore an ACL that grants super administrator access, features or organizations beyond your own',
      );
    }
  }
}
