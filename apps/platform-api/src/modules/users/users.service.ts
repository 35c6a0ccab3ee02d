import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { type Db, DomainError } from '@app/service-kit';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import { AclResolverService } from '../../core/auth/acl-resolver.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import type { CommandDefinition, Snapshot } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';
import { reachOf, scopeIn } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { AuthService } from '../auth/auth.service.js';
import { hashPassword } from '../auth/credentials.js';
import { OrganizationsRepository } from '../directory/organizations.repository.js';
import { TenantsRepository } from '../directory/tenants.repository.js';
import { RolesRepository } from '../roles/roles.repository.js';
import { InvitationsService } from './invitations.service.js';
import {
  assertMayAssignRoles,
  assertMayManageUser,
  assertOrganizationAssignable,
  assertUserInCallerOrganizations,
} from './user-access.policy.js';
import { UserDeletionService } from './user-deletion.service.js';
import { UserSnapshots } from './user-snapshot.js';
import { USERS_PAGE_SIZE_DEFAULT, type CreateUserDto, type ListUsersQuery, type UpdateUserDto, type UserListDto } from './users.dto.js';
import { UsersRepository, type UserPatch, type UserRecord } from './users.repository.js';

const EMAIL_UNIQUE_INDEX = 'users_tenant_email_uq';
const USER_LIST_FIELDS = ['id', 'email', 'name', 'roles', 'tenantId', 'organizationId', 'hasPassword', 'createdAt'];

const normalizeEmail = (email: string) => email.trim().toLowerCase();
const normalizeName = (name: string | null | undefined) => (name?.trim() ? name.trim() : null);

/** A user creation with the defaults resolved and the password already hashed (argon2 stays outside the transaction). */
interface CreateUserInput {
  tenantId: string;
  otherTenant: boolean;
  organizationId: string | null;
  email: string;
  name: string | null;
  roleIds: string[];
  passwordHash: string | null;
}

/** A user edit with the password already hashed; `passwordHash` is set only for the password-changing command. */
interface EditUserInput {
  id: string;
  email?: string;
  name?: string | null;
  organizationId?: string | null;
  roleIds?: string[];
  passwordHash?: string;
}

/**
 * Users of a tenant: list, create (with an invitation when no password is given), edit and soft
 * delete. Super administrators act in every tenant; everyone else in its own tenant and organizations,
 * within the grant boundary.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly roles: RolesRepository,
    private readonly tenants: TenantsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly snapshots: UserSnapshots,
    private readonly deletion: UserDeletionService,
    private readonly resolver: AclResolverService,
    private readonly cache: AccessCacheService,
    private readonly auth: AuthService,
    private readonly invitations: InvitationsService,
    private readonly accessLog: AccessLogService,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.createCommand, this.updateCommand, this.passwordUpdateCommand, this.deleteCommand);
  }

  /**
   * What every user command shares: the snapshot (never the password hash, see user-snapshot.ts) and its
   * inverse, and after any commit, its undo or its redo, the ACL caches (roles or the user ACL may have
   * changed; an undo or redo always may) and, when the bus names the user, the user's cached sessions.
   */
  private readonly userCommandBase = {
    resourceKind: 'auth.user',
    snapshot: (tx: EntityManager, userId: string) => this.snapshots.snapshot(tx, userId),
    restore: (tx: EntityManager, userId: string, snapshot: Snapshot | null) => this.snapshots.restore(tx, userId, snapshot),
    afterCommit: async (_auth: AuthContext, userId?: string) => {
      await this.cache.invalidateAcls();
      // An undo of a create or a redo of a delete ends the user's sessions: drop them from every instance's cache.
      if (userId) await this.cache.invalidateUser(userId);
    },
  };

  /**
   * Undoable: the undo soft-deletes the user (voiding its setup token; the invitation email already sent
   * is not recalled), the redo brings the same user back (a new invitation must be sent to set a password).
   */
  private readonly createCommand: CommandDefinition<CreateUserInput, { id: string }> = {
    ...this.userCommandBase,
    id: 'auth.users.create',
    features: ['auth.users.create'],
    label: 'Create user',
    actionType: 'create',
    event: 'auth.user.created',
    execute: async (tx, auth, input) => {
      const { tenantId, organizationId, email, roleIds } = input;
      if (input.otherTenant && !(await this.tenants.exists(tx, tenantId))) throw DomainError.badRequest('tenant not found');
      const scope = scopeIn(auth, tenantId);
      await this.checkOrganization(tx, auth, scope, organizationId);
      await this.checkRoles(tx, auth, scope, roleIds);
      if (await this.users.emailTaken(tx, scope, { email })) throw DomainError.conflict('email already exists');
      const userId = await this.users
        .insert(tx, scope, { organizationId, email, name: input.name, passwordHash: input.passwordHash })
        .catch(duplicateEmailAsConflict);
      await this.roles.addMemberships(tx, scope, { userId, roleIds });
      return { resourceId: userId, result: { id: userId } };
    },
  };

  /** An edit without a new password: undoable (email, name, organization, roles). */
  private readonly updateCommand: CommandDefinition<EditUserInput, { ok: true }> = {
    ...this.userCommandBase,
    id: 'auth.users.update',
    features: ['auth.users.edit'],
    label: 'Edit user',
    actionType: 'edit',
    event: 'auth.user.updated',
    targetId: (input) => input.id,
    execute: async (tx, auth, input) => {
      const target = await this.applyEdit(tx, auth, input);
      return { resourceId: target.id, result: { ok: true } };
    },
  };

  /**
   * An edit that sets a new password: logged (the snapshots carry `passwordVersion`, never the hash) but
   * not undoable, since restoring the old password would need the old hash in the log. Without `restore`
   * the bus issues no undo token, and a later undo of an earlier edit is refused (the password changed).
   */
  private readonly passwordUpdateCommand: CommandDefinition<EditUserInput, { ok: true; tenantId: string }> = {
    resourceKind: this.userCommandBase.resourceKind,
    snapshot: this.userCommandBase.snapshot,
    afterCommit: () => this.cache.invalidateAcls(),
    id: 'auth.users.password.update',
    features: ['auth.users.edit'],
    label: 'Edit user (password changed)',
    actionType: 'edit',
    event: 'auth.user.updated',
    targetId: (input) => input.id,
    execute: async (tx, auth, input) => {
      const target = await this.applyEdit(tx, auth, input);
      return { resourceId: target.id, result: { ok: true, tenantId: target.tenantId } };
    },
  };

  /** Undoable: the undo brings the user back with its roles and ACL; its sessions stay ended. */
  private readonly deleteCommand: CommandDefinition<{ id: string }, { ok: true }> = {
    ...this.userCommandBase,
    id: 'auth.users.delete',
    features: ['auth.users.delete'],
    label: 'Delete user',
    actionType: 'delete',
    event: 'auth.user.deleted',
    targetId: (input) => input.id,
    execute: async (tx, auth, input) => {
      const target = await this.findManageable(tx, auth, input.id);
      await this.deletion.softDelete(tx, scopeIn(auth, target.tenantId), target.id);
      return { resourceId: target.id, result: { ok: true } };
    },
  };

  async list(auth: AuthContext, query: ListUsersQuery): Promise<UserListDto> {
    const page = query.page ?? 1;
    const pageSize = query.pageSize ?? USERS_PAGE_SIZE_DEFAULT;
    if (query.organizationId && !auth.canAccessOrganization(query.organizationId)) {
      throw DomainError.forbidden('organization is outside your access');
    }
    const empty = { items: [], total: 0, totalPages: 1, page, pageSize };
    // Only super administrators look into other tenants; for anyone else such a filter matches nothing.
    if (!auth.isSuperAdmin && query.tenantId && query.tenantId !== auth.tenantId) return empty;
    // A super administrator's tenant filter narrows its reach (every tenant) to that tenant; anyone
    // else's reach is its tenant, and its organizations when it is restricted to some.
    const reach = auth.isSuperAdmin && query.tenantId ? scopeIn(auth, query.tenantId) : reachOf(auth);
    const { total, items } = await this.users.list(this.dataSource, reach, {
      id: query.id,
      search: query.search || undefined,
      roleId: query.roleId,
      organizationId: query.organizationId,
      limit: pageSize,
      offset: (page - 1) * pageSize,
    });
    this.accessLog.record(auth, {
      resourceKind: 'auth.user',
      resourceId: query.id,
      accessType: 'read:list',
      fields: USER_LIST_FIELDS,
      context: { page, pageSize, returned: items.length, ids: items.map((u) => u.id) },
    });
    return {
      items: items.map((u) => ({ ...u, createdAt: u.createdAt.toISOString() })),
      total,
      totalPages: Math.max(1, Math.ceil(total / pageSize)),
      page,
      pageSize,
    };
  }

  async create(auth: AuthContext, input: CreateUserDto): Promise<{ id: string }> {
    const tenantId = input.tenantId ?? auth.tenantId;
    const otherTenant = tenantId !== auth.tenantId;
    if (otherTenant && !auth.isSuperAdmin) {
      throw DomainError.forbidden('only a super administrator may create users in another tenant');
    }
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const created = await this.bus.execute(auth, this.createCommand, {
      tenantId,
      otherTenant,
      organizationId: input.organizationId ?? (otherTenant ? null : auth.organizationId),
      email: normalizeEmail(input.email),
      name: normalizeName(input.name),
      roleIds: [...new Set(input.roleIds ?? [])],
      passwordHash,
    });
    if (!passwordHash) await this.invitations.inviteCreatedUser(scopeIn(auth, tenantId), created.id);
    return created;
  }

  async update(auth: AuthContext, input: UpdateUserDto): Promise<{ ok: true }> {
    const fields = (['email', 'password', 'name', 'roleIds', 'organizationId'] as const).filter((k) => input[k] !== undefined);
    if (fields.length === 0) throw DomainError.badRequest('nothing to update: give email, password, name, roleIds or organizationId');
    const edit: EditUserInput = {
      id: input.id,
      email: input.email,
      name: input.name,
      organizationId: input.organizationId,
      roleIds: input.roleIds ? [...new Set(input.roleIds)] : undefined,
    };
    if (!input.password) return this.bus.execute(auth, this.updateCommand, edit);
    const { tenantId } = await this.bus.execute(auth, this.passwordUpdateCommand, {
      ...edit,
      passwordHash: await hashPassword(input.password),
    });
    await this.auth.revokeAllSessions(scopeIn(auth, tenantId), { userId: input.id });
    return { ok: true };
  }

  async remove(auth: AuthContext, userId: string): Promise<{ ok: true }> {
    if (userId === auth.userId) throw DomainError.badRequest('you cannot delete your own account');
    const result = await this.bus.execute(auth, this.deleteCommand, { id: userId });
    await this.cache.invalidateUser(userId); // its sessions are gone: drop them from every instance's cache
    return result;
  }

  /**
   * A user that is not deleted and that the caller can see: in its tenant (any tenant for a super
   * administrator; 404 otherwise) and within its organizations (403 otherwise). `lock` holds the row
   * for the transaction. Also the consents' check (their commands run in the same transaction).
   */
  async findVisible(db: Db, auth: AuthContext, input: { id: string; lock?: boolean }): Promise<UserRecord> {
    const user = await this.users.findActive(db, reachOf(auth), { id: input.id, lock: input.lock ? 'update' : undefined });
    if (!user) throw DomainError.notFound('user not found');
    assertUserInCallerOrganizations(auth, user);
    return user;
  }

  /** Applies an edit inside the command's transaction: checks (404, 403, 400, 409) first, then the writes. */
  private async applyEdit(tx: EntityManager, auth: AuthContext, input: EditUserInput): Promise<UserRecord> {
    const target = await this.findManageable(tx, auth, input.id);
    const scope = scopeIn(auth, target.tenantId);
    const patch: UserPatch = { passwordHash: input.passwordHash };
    if (input.email !== undefined) {
      patch.email = normalizeEmail(input.email);
      if (await this.users.emailTaken(tx, scope, { email: patch.email, exceptUserId: target.id })) {
        throw DomainError.conflict('email already exists');
      }
    }
    if (input.name !== undefined) patch.name = normalizeName(input.name);
    if (input.organizationId !== undefined) {
      patch.organizationId = input.organizationId;
      await this.checkOrganization(tx, auth, scope, input.organizationId);
    }
    if (input.roleIds) await this.checkRoles(tx, auth, scope, input.roleIds);
    await this.users.update(tx, scope, { id: target.id, patch }).catch(duplicateEmailAsConflict);
    if (input.roleIds) await this.roles.replaceMemberships(tx, scope, { userId: target.id, roleIds: input.roleIds });
    return target;
  }

  /** A visible user whose access does not exceed the caller's (403 otherwise), locked for the transaction. */
  private async findManageable(tx: EntityManager, auth: AuthContext, userId: string): Promise<UserRecord> {
    const user = await this.findVisible(tx, auth, { id: userId, lock: true });
    if (!auth.isSuperAdmin) assertMayManageUser(auth, await this.resolver.resolve(user.id, user.tenantId));
    return user;
  }

  private async checkOrganization(db: Db, auth: AuthContext, scope: TenantScope, organizationId: string | null): Promise<void> {
    const inTenant = organizationId !== null && (await this.organizations.existsInReach(db, scope, organizationId));
    assertOrganizationAssignable(auth, organizationId, inTenant);
  }

  private async checkRoles(db: Db, auth: AuthContext, scope: TenantScope, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    assertMayAssignRoles(auth, roleIds, await this.roles.assignable(db, scope, roleIds));
  }
}

function duplicateEmailAsConflict(err: unknown): never {
  if (isUniqueViolation(err, EMAIL_UNIQUE_INDEX)) throw DomainError.conflict('email already exists');
  throw err;
}
