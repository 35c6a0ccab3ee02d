import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type Db, DomainError } from '@app/service-kit';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import type { CommandDefinition, RestorePlan } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { assertMayManage, checkGrant, withinCallerOrganizations } from '../../core/auth/grant-boundary.js';
import { reachOf, scopeIn } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { OrganizationsRepository } from '../directory/organizations.repository.js';
import type { StoredAcl } from '../roles/role-acl.repository.js';
import { ACL_FIELDS, ACL_MANAGE, NO_ACL, unique } from '../roles/role-acl.service.js';
import { aclOf } from '../roles/role-snapshot.js';
import { RolesRepository } from '../roles/roles.repository.js';
import { UserAclRepository } from './user-acl.repository.js';
import { UserAclSnapshots } from './user-acl-snapshot.js';
import { type UserRecord, UsersRepository } from './users.repository.js';

export interface UserAclInput {
  userId: string;
  features?: string[];
  isSuperAdmin?: boolean;
  organizations?: string[] | null;
}

/**
 * User ACLs (per tenant and user; one replaces the user's role ACLs), within the grant boundary of
 * decisions.md "Features and ACL". Every write invalidates the resolved-ACL caches of all instances
 * once committed.
 */
@Injectable()
export class UserAclService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly userAcls: UserAclRepository,
    private readonly roles: RolesRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly snapshots: UserAclSnapshots,
    private readonly cache: AccessCacheService,
    private readonly accessLog: AccessLogService,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.userAclCommand);
  }

  /** PUT /auth/users/acl: the user's custom ACL row (null: none), a child of the user. */
  private readonly userAclCommand: CommandDefinition<UserAclInput, { ok: true; sanitized: boolean }> = {
    id: 'auth.users.acl.update',
    label: 'Edit user ACL',
    actionType: 'edit',
    resourceKind: 'auth.user_acl',
    features: [ACL_MANAGE],
    targetId: (input) => input.userId,
    snapshot: (tx, userId) => this.snapshots.snapshot(tx, userId),
    restore: (tx, userId, snapshot) => this.snapshots.restore(tx, userId, snapshot),
    authorizeRestore: (tx, auth, plan) => this.authorizeUserAclRestore(tx, auth, plan),
    afterCommit: () => this.cache.invalidateAcls(),
    execute: async (tx, auth, input) => {
      const user = await this.findUser(tx, auth, input.userId, true);
      const scope = scopeIn(auth, user.tenantId);
      const stored = await this.userAcls.find(tx, scope, user.id);
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
      if (input.organizations !== undefined) await this.assertOrganizationsOfTenant(tx, scope, next.organizations);
      if (next.features.length === 0 && !next.isSuperAdmin) {
        await this.userAcls.delete(tx, scope, user.id);
      } else {
        await this.userAcls.upsert(tx, scope, { userId: user.id, acl: next });
      }
      return { resourceId: user.id, parent: { kind: 'auth.user', id: user.id }, result: { ok: true, sanitized: grant.exceeded } };
    },
  };

  async getUserAcl(auth: AuthContext, userId: string): Promise<StoredAcl & { hasCustomAcl: boolean }> {
    const db = this.dataSource;
    const user = await this.findUser(db, auth, userId);
    const custom = await this.userAcls.find(db, scopeIn(auth, user.tenantId), user.id);
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
   * The user in the caller's tenant (a super administrator: in any tenant) and within the caller's
   * organizations (a user in none is outside a restricted caller's); 404 otherwise: a user out of the
   * caller's scope is as absent as another tenant's, so its existence does not leak either. `lock`
   * serialises concurrent ACL writes for the same user, also when no ACL row exists yet.
   */
  private async findUser(db: Db, auth: AuthContext, userId: string, lock = false): Promise<UserRecord> {
    const user = await this.users.findActive(db, reachOf(auth), { id: userId, lock: lock ? 'no key update' : undefined });
    if (!user || !withinCallerOrganizations(auth, user.organizationId)) throw DomainError.notFound('user not found');
    return user;
  }

  /**
   * Undo and redo of a user ACL write, by the rules of the write itself: the user within the caller's
   * scope (404), not a super administrator (403), and the ACL to bring back within what the caller may
   * grant now (403: it may have lost features or organizations since).
   */
  private async authorizeUserAclRestore(tx: Db, auth: AuthContext, plan: RestorePlan): Promise<void> {
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
  private async assertTargetManageable(db: Db, auth: AuthContext, user: UserRecord, custom: StoredAcl | null): Promise<void> {
    if (auth.isSuperAdmin) return;
    const isSuperAdmin = Boolean(custom?.isSuperAdmin) || (await this.roles.holdsSuperAdminRole(db, scopeIn(auth, user.tenantId), user.id));
    assertMayManage(auth, { isSuperAdmin });
  }

  private async assertOrganizationsOfTenant(db: Db, scope: TenantScope, organizations: string[] | null): Promise<void> {
    const foreign = await this.organizations.foreignIds(db, scope, organizations ?? []);
    if (foreign.length) throw DomainError.badRequest(`organizations not found in the tenant: ${foreign.join(', ')}`);
  }
}
