import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { assertMayManage, checkGrant, withinCallerOrganizations } from '../../core/auth/grant-boundary.js';
import type { CommandDefinition, RestorePlan } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { aclOf, changedRoleAcls, restoreRoleAcls, restoreUserAcl, snapshotRoleForAcl, snapshotUserAcl } from './acl-snapshot.js';
import { ROLE_SNAPSHOT_SQL } from './role-snapshot.js';
import { type AclUser, AclsRepository, type StoredAcl } from './acls.repository.js';
import { type Queryable, RolesRepository } from './roles.repository.js';

const NO_ACL: StoredAcl = { isSuperAdmin: false, features: [], organizations: null };
const ACL_FIELDS = ['isSuperAdmin', 'features', 'organizations'];
/** The feature of every ACL route, so of the ACL commands and their undo and redo. */
const ACL_MANAGE = 'auth.acl.manage';

export interface RoleAclInput {
  roleId: string;
  features: string[];
  isSuperAdmin?: boolean;
  organizations?: string[] | null;
  tenantId?: string;
}

export interface UserAclInput {
  userId: string;
  features?: string[];
  isSuperAdmin?: boolean;
  organizations?: string[] | null;
}

/**
 * Role ACLs (per tenant and role) and user ACLs (per tenant and user; one replaces the user's role
 * ACLs), within the grant boundary of decisions.md "Features and ACL". Every write invalidates the
 * resolved-ACL caches of all instances once committed.
 */
@Injectable()
export class AclService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly roles: RolesRepository,
    private readonly acls: AclsRepository,
    private readonly cache: AccessCacheService,
    private readonly accessLog: AccessLogService,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.roleAclCommand, this.userAclCommand);
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
    // Only a super administrator names another tenant (aclTenant: 404 for anyone else).
    snapshotScope: (auth, input) => ({ tenantId: auth.isSuperAdmin ? (input.tenantId ?? auth.tenantId) : auth.tenantId }),
    snapshot: snapshotRoleForAcl,
    snapshotSql: ROLE_SNAPSHOT_SQL,
    restore: restoreRoleAcls,
    authorizeRestore: async (_tx, auth, plan) => authorizeRoleAclRestore(auth, plan),
    afterCommit: () => this.cache.invalidateAcls(),
    execute: async (tx, auth, input) => {
      const scope = await this.aclTenant(tx, auth, input.tenantId);
      // Locks the role: concurrent writers of its ACL run one after the other.
      const role = await this.roles.findInScope(tx, input.roleId, scope, 'no key update');
      if (!role) throw DomainError.notFound('role not found');
      assertMayManage(auth, await this.acls.roleAcl(tx, scope, role.id));
      if (checkGrant(auth, input.requested).exceeded) {
        throw DomainError.forbidden('cannot grant super administrator access, features or organizations beyond your own');
      }
      await this.assertOrganizationsOfTenant(tx, scope, input.requested.organizations);
      await this.acls.upsertRoleAcl(tx, scope, role.id, input.requested);
      return { resourceId: role.id, result: { ok: true, sanitized: false } };
    },
  };

  /** PUT /auth/users/acl: the user's custom ACL row (null: none), a child of the user. */
  private readonly userAclCommand: CommandDefinition<UserAclInput, { ok: true; sanitized: boolean }> = {
    id: 'auth.users.acl.update',
    label: 'Edit user ACL',
    actionType: 'edit',
    resourceKind: 'auth.user_acl',
    features: [ACL_MANAGE],
    targetId: (input) => input.userId,
    snapshot: snapshotUserAcl,
    restore: restoreUserAcl,
    authorizeRestore: (tx, auth, plan) => this.authorizeUserAclRestore(tx, auth, plan),
    afterCommit: () => this.cache.invalidateAcls(),
    execute: async (tx, auth, input) => {
      const user = await this.findUser(tx, auth, input.userId, true);
      const stored = await this.acls.userAcl(tx, user.tenantId, user.id);
      await this.assertTargetManageable(tx, auth, user, stored);
      // Without a stored ACL, omitted organizations mean the caller's own restriction: a new ACL never
      // starts out wider than what its writer may see (null, "no restriction", only for unrestricted callers).
      const current = stored ?? { ...NO_ACL, organizations: auth.acl.organizations };
      const grant = checkGrant(auth, {
        isSuperAdmin: input.isSuperAdmin ?? false,
        features: unique(input.features ?? []),
        // Omitted organizations keep the stored ones, as far as they lie within the caller's restriction:
        // whatever the write changes then applies in those organizations only.
        organizations: input.organizations === undefined ? current.organizations : input.organizations && unique(input.organizations),
      });
      const next: StoredAcl = {
        isSuperAdmin: input.isSuperAdmin === undefined ? current.isSuperAdmin : grant.allowed.isSuperAdmin,
        features: input.features === undefined ? current.features : grant.allowed.features,
        organizations: grant.allowed.organizations,
      };
      if (input.organizations !== undefined) await this.assertOrganizationsOfTenant(tx, user.tenantId, next.organizations);
      if (next.features.length === 0 && !next.isSuperAdmin) {
        await this.acls.deleteUserAcl(tx, user.tenantId, user.id);
      } else {
        await this.acls.upsertUserAcl(tx, user.tenantId, user.id, next);
      }
      return { resourceId: user.id, parent: { kind: 'auth.user', id: user.id }, result: { ok: true, sanitized: grant.exceeded } };
    },
  };

  async getRoleAcl(auth: AuthContext, roleId: string, tenantId?: string): Promise<StoredAcl> {
    const db = this.dataSource;
    const scope = await this.aclTenant(db, auth, tenantId);
    const role = await this.roles.findInScope(db, roleId, scope);
    if (!role) throw DomainError.notFound('role not found');
    const acl = await this.acls.roleAcl(db, scope, role.id);
    assertMayManage(auth, acl);
    this.accessLog.record(auth, {
      resourceKind: 'auth.role_acl',
      resourceId: role.id,
      accessType: 'read',
      fields: ACL_FIELDS,
      context: { tenantId: scope },
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

  async getUserAcl(auth: AuthContext, userId: string): Promise<StoredAcl & { hasCustomAcl: boolean }> {
    const db = this.dataSource;
    const user = await this.findUser(db, auth, userId);
    const custom = await this.acls.userAcl(db, user.tenantId, user.id);
    await this.assertTargetManageable(db, auth, user, custom);
    this.accessLog.record(auth, {
      resourceKind: 'auth.user_acl',
      resourceId: user.id,
      accessType: 'read',
      fields: [...ACL_FIELDS, 'hasCustomAcl'],
      context: { tenantId: user.tenantId },
    });
    return custom ? { ...custom, hasCustomAcl: true } : { ...NO_ACL, hasCustomAcl: false };
  }

  /**
   * Updates the user's custom ACL. Omitted fields keep their stored values; given ones the caller may
   * not grant are dropped (features), coerced (isSuperAdmin) or narrowed (organizations), and the
   * answer says `sanitized`. An ACL left with no features and no super administrator flag is removed,
   * so the user's role ACLs apply again. Runs as the undoable command `auth.users.acl.update`.
   */
  putUserAcl(auth: AuthContext, input: UserAclInput): Promise<{ ok: true; sanitized: boolean }> {
    return this.bus.execute(auth, this.userAclCommand, input);
  }

  /**
   * The tenant whose role ACL is read or written: the caller's by default. Only a super administrator
   * may name another (an existing) tenant; for anyone else it is a 404, as if the role did not exist.
   */
  private async aclTenant(db: Queryable, auth: AuthContext, tenantId: string | undefined): Promise<string> {
    if (!tenantId || tenantId === auth.tenantId) return auth.tenantId;
    if (!auth.isSuperAdmin) throw DomainError.notFound('role not found');
    if (!(await this.roles.tenantExists(db, tenantId))) throw DomainError.notFound('tenant not found');
    return tenantId;
  }

  /**
   * The user in the caller's tenant (a super administrator: in any tenant) and within the caller's
   * organizations (a user in none is outside a restricted caller's); 404 otherwise: a user out of the
   * caller's scope is as absent as another tenant's, so its existence does not leak either.
   */
  private async findUser(db: Queryable, auth: AuthContext, userId: string, lock = false): Promise<AclUser> {
    const user = await this.acls.findUser(db, userId, auth.isSuperAdmin ? null : auth.tenantId, lock);
    if (!user || !withinCallerOrganizations(auth, user.organizationId)) throw DomainError.notFound('user not found');
    return user;
  }

  /**
   * Undo and redo of a user ACL write, by the rules of the write itself: the user within the caller's
   * scope (404), not a super administrator (403), and the ACL to bring back within what the caller may
   * grant now (403: it may have lost features or organizations since).
   */
  private async authorizeUserAclRestore(tx: Queryable, auth: AuthContext, plan: RestorePlan): Promise<void> {
    if (auth.isSuperAdmin) return;
    const user = await this.findUser(tx, auth, plan.resourceId);
    await this.assertTargetManageable(tx, auth, user, plan.current && aclOf(plan.current));
    if (plan.target && checkGrant(auth, aclOf(plan.target)).exceeded) {
      throw DomainError.forbidden(
        'cannot restore an ACL that grants super administrator access, features or organizations beyond your own',
      );
    }
  }

  /** 403 when the target is a super administrator (through any role or its own ACL) and the caller is not. */
  private async assertTargetManageable(
    db: Queryable,
    auth: AuthContext,
    user: { id: string; tenantId: string },
    custom: StoredAcl | null,
  ): Promise<void> {
    if (auth.isSuperAdmin) return;
    const isSuperAdmin = Boolean(custom?.isSuperAdmin) || (await this.acls.hasSuperAdminRole(db, user.tenantId, user.id));
    assertMayManage(auth, { isSuperAdmin });
  }

  private async assertOrganizationsOfTenant(db: Queryable, tenantId: string, organizations: string[] | null): Promise<void> {
    const foreign = await this.acls.foreignOrganizations(db, tenantId, organizations ?? []);
    if (foreign.length) throw DomainError.badRequest(`organizations not found in the tenant: ${foreign.join(', ')}`);
  }
}

function unique(values: string[]): string[] {
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
