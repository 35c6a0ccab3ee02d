import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessLogService } from '../../core/audit/access-log.service.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import { AclResolverService } from '../../core/auth/acl-resolver.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import type { CommandDefinition } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import { AuthService } from '../auth/auth.service.js';
import { hashPassword } from '../auth/credentials.js';
import { PasswordResetService } from '../auth/password-reset.service.js';
import {
  assertMayAssignRoles,
  assertMayManageUser,
  assertOrganizationAssignable,
  assertUserInCallerOrganizations,
} from './user-access.policy.js';
import { USERS_PAGE_SIZE_DEFAULT, type CreateUserDto, type ListUsersQuery, type UpdateUserDto, type UserListDto } from './users.dto.js';
import { isUniqueViolation } from '../../core/database/sql-helpers.js';
import { UsersRepository, type Queryable, type UserPatch, type UserRecord } from './users.repository.js';
import { restoreUser, snapshotUser } from './user-snapshot.js';

/** decisions.md "Rate limits": resend invite 3 per 300 s, counted per client IP. */
export const RESEND_INVITE_PER_IP: RateRule = { name: 'resend-invite', points: 3, durationSeconds: 300 };

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
 * Users of a tenant: list, create (with an invitation when no password is given), edit, soft delete,
 * and re-send invitations. Super administrators act in every tenant; everyone else in its own tenant
 * and organizations, within the grant boundary.
 */
@Injectable()
export class UsersService {
  private readonly logger = new Logger(UsersService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly resolver: AclResolverService,
    private readonly cache: AccessCacheService,
    private readonly sessions: AuthService,
    private readonly invitations: PasswordResetService,
    private readonly rateLimiter: RateLimiterService,
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
    snapshot: snapshotUser,
    restore: (tx: Parameters<typeof restoreUser>[0], userId: string, snapshot: Parameters<typeof restoreUser>[2]) =>
      restoreUser(tx, userId, snapshot, (db, user) => this.users.softDelete(db, user)),
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
      if (input.otherTenant && !(await this.users.tenantExists(tx, tenantId))) throw DomainError.badRequest('tenant not found');
      await this.checkOrganization(auth, tx, tenantId, organizationId);
      await this.checkRoles(auth, tx, tenantId, roleIds);
      if (await this.users.emailTaken(tx, tenantId, email)) throw DomainError.conflict('email already exists');
      const userId = await this.users
        .insert(tx, { tenantId, organizationId, email, name: input.name, passwordHash: input.passwordHash })
        .catch(duplicateEmailAsConflict);
      await this.users.addRoles(tx, tenantId, userId, roleIds);
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
      const target = await this.findManageable(auth, tx, input.id);
      await this.users.softDelete(tx, target);
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
    const { total, items } = await this.users.list({
      tenantId: auth.isSuperAdmin ? (query.tenantId ?? null) : auth.tenantId,
      visibleOrganizations: auth.isSuperAdmin ? null : auth.acl.organizations,
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
    if (!passwordHash) await this.inviteCreatedUser(tenantId, created.id);
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
    await this.sessions.revokeAllSessions(tenantId, input.id);
    return { ok: true };
  }

  async remove(auth: AuthContext, userId: string): Promise<{ ok: true }> {
    if (userId === auth.userId) throw DomainError.badRequest('you cannot delete your own account');
    const result = await this.bus.execute(auth, this.deleteCommand, { id: userId });
    await this.cache.invalidateUser(userId); // its sessions are gone: drop them from every instance's cache
    return result;
  }

  /** A new 48-hour setup token (earlier ones invalidated) and email, for a user who has no password yet. */
  async resendInvite(auth: AuthContext, userId: string, client: { ip: string; origin?: string }): Promise<{ ok: true }> {
    this.invitations.assertAllowedOrigin(client.origin);
    await this.rateLimiter.consume([{ rule: RESEND_INVITE_PER_IP, ip: client.ip }]);
    const user = await this.findVisible(auth, this.dataSource, userId);
    if (user.hasPassword) throw DomainError.conflict('user already has a password');
    await this.invitations.sendInvitation(user.tenantId, user.id);
    return { ok: true };
  }

  /**
   * A user that is not deleted and that the caller can see: in its tenant (any tenant for a super
   * administrator; 404 otherwise) and within its organizations (403 otherwise).
   */
  async findVisible(auth: AuthContext, db: Queryable, userId: string, lock = false): Promise<UserRecord> {
    const user = await this.users.findActive(db, userId, auth.isSuperAdmin ? null : auth.tenantId, lock);
    if (!user) throw DomainError.notFound('user not found');
    assertUserInCallerOrganizations(auth, user);
    return user;
  }

  /** Applies an edit inside the command's transaction: checks (404, 403, 400, 409) first, then the writes. */
  private async applyEdit(tx: Queryable, auth: AuthContext, input: EditUserInput): Promise<UserRecord> {
    const target = await this.findManageable(auth, tx, input.id);
    const patch: UserPatch = { passwordHash: input.passwordHash };
    if (input.email !== undefined) {
      patch.email = normalizeEmail(input.email);
      if (await this.users.emailTaken(tx, target.tenantId, patch.email, target.id)) throw DomainError.conflict('email already exists');
    }
    if (input.name !== undefined) patch.name = normalizeName(input.name);
    if (input.organizationId !== undefined) {
      patch.organizationId = input.organizationId;
      await this.checkOrganization(auth, tx, target.tenantId, input.organizationId);
    }
    if (input.roleIds) await this.checkRoles(auth, tx, target.tenantId, input.roleIds);
    await this.users.update(tx, target, patch).catch(duplicateEmailAsConflict);
    if (input.roleIds) await this.users.replaceRoles(tx, target, input.roleIds);
    return target;
  }

  /** A visible user whose access does not exceed the caller's (403 otherwise), locked for the transaction. */
  private async findManageable(auth: AuthContext, tx: Queryable, userId: string): Promise<UserRecord> {
    const user = await this.findVisible(auth, tx, userId, true);
    if (!auth.isSuperAdmin) assertMayManageUser(auth, await this.resolver.resolve(user.id, user.tenantId));
    return user;
  }

  private async checkOrganization(auth: AuthContext, db: Queryable, tenantId: string, organizationId: string | null): Promise<void> {
    const inTenant = organizationId !== null && (await this.users.organizationInTenant(db, organizationId, tenantId));
    assertOrganizationAssignable(auth, organizationId, inTenant);
  }

  private async checkRoles(auth: AuthContext, db: Queryable, tenantId: string, roleIds: string[]): Promise<void> {
    if (roleIds.length === 0) return;
    assertMayAssignRoles(auth, roleIds, await this.users.assignableRoles(db, tenantId, roleIds));
  }

  /**
   * After the user is committed: a failure here (Redis down) must not undo or hide the account, which
   * exists either way; POST /auth/users/resend-invite is the way to try again.
   */
  private async inviteCreatedUser(tenantId: string, userId: string): Promise<void> {
    try {
      await this.invitations.sendInvitation(tenantId, userId);
    } catch (err) {
      this.logger.error({ err, tenantId, userId }, 'user created but the invitation could not be queued; resend it');
    }
  }
}

function duplicateEmailAsConflict(err: unknown): never {
  if (isUniqueViolation(err, EMAIL_UNIQUE_INDEX)) throw DomainError.conflict('email already exists');
  throw err;
}
