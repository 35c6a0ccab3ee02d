import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import { AclResolverService } from '../../core/auth/acl-resolver.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
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
import { isUniqueViolation, UsersRepository, type Queryable, type UserPatch, type UserRecord } from './users.repository.js';

/** decisions.md "Rate limits": resend invite 3 per 300 s, counted per client IP. */
export const RESEND_INVITE_PER_IP: RateRule = { name: 'resend-invite', points: 3, durationSeconds: 300 };

const EMAIL_UNIQUE_INDEX = 'users_tenant_email_uq';

const normalizeEmail = (email: string) => email.trim().toLowerCase();
const normalizeName = (name: string | null | undefined) => (name?.trim() ? name.trim() : null);

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
  ) {}

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
    const email = normalizeEmail(input.email);
    const roleIds = [...new Set(input.roleIds ?? [])];
    const passwordHash = input.password ? await hashPassword(input.password) : null;

    const id = await this.dataSource.transaction(async (tx) => {
      if (otherTenant && !(await this.users.tenantExists(tx, tenantId))) throw DomainError.badRequest('tenant not found');
      const organizationId = input.organizationId ?? (otherTenant ? null : auth.organizationId);
      await this.checkOrganization(auth, tx, tenantId, organizationId);
      await this.checkRoles(auth, tx, tenantId, roleIds);
      if (await this.users.emailTaken(tx, tenantId, email)) throw DomainError.conflict('email already exists');
      const userId = await this.users
        .insert(tx, { tenantId, organizationId, email, name: normalizeName(input.name), passwordHash })
        .catch(duplicateEmailAsConflict);
      await this.users.addRoles(tx, tenantId, userId, roleIds);
      return userId;
    });

    if (roleIds.length) await this.cache.invalidateAcls();
    if (!passwordHash) await this.inviteCreatedUser(tenantId, id);
    return { id };
  }

  async update(auth: AuthContext, input: UpdateUserDto): Promise<{ ok: true }> {
    const fields = (['email', 'password', 'name', 'roleIds', 'organizationId'] as const).filter((k) => input[k] !== undefined);
    if (fields.length === 0) throw DomainError.badRequest('nothing to update: give email, password, name, roleIds or organizationId');
    const roleIds = input.roleIds ? [...new Set(input.roleIds)] : undefined;
    const passwordHash = input.password ? await hashPassword(input.password) : undefined;

    const user = await this.dataSource.transaction(async (tx) => {
      const target = await this.findManageable(auth, tx, input.id);
      const patch: UserPatch = { passwordHash };
      if (input.email !== undefined) {
        patch.email = normalizeEmail(input.email);
        if (await this.users.emailTaken(tx, target.tenantId, patch.email, target.id)) throw DomainError.conflict('email already exists');
      }
      if (input.name !== undefined) patch.name = normalizeName(input.name);
      if (input.organizationId !== undefined) {
        patch.organizationId = input.organizationId;
        await this.checkOrganization(auth, tx, target.tenantId, input.organizationId);
      }
      if (roleIds) await this.checkRoles(auth, tx, target.tenantId, roleIds);
      await this.users.update(tx, target, patch).catch(duplicateEmailAsConflict);
      if (roleIds) await this.users.replaceRoles(tx, target, roleIds);
      return target;
    });

    if (roleIds) await this.cache.invalidateAcls();
    if (passwordHash) await this.sessions.revokeAllSessions(user.tenantId, user.id);
    return { ok: true };
  }

  async remove(auth: AuthContext, userId: string): Promise<{ ok: true }> {
    if (userId === auth.userId) throw DomainError.badRequest('you cannot delete your own account');
    const user = await this.dataSource.transaction(async (tx) => {
      const target = await this.findManageable(auth, tx, userId);
      await this.users.softDelete(tx, target);
      return target;
    });
    await this.cache.invalidateUser(user.id); // its sessions are gone: drop them from every instance's cache
    await this.cache.invalidateAcls();
    return { ok: true };
  }

  /** A new 48-hour setup token (earlier ones invalidated) and email, for a user who has no password yet. */
  async resendInvite(auth: AuthContext, userId: string, client: { ip: string; origin?: string }): Promise<{ ok: true }> {
    this.invitations.assertAllowedOrigin(client.origin);
    await this.rateLimiter.consume([{ rule: RESEND_INVITE_PER_IP, key: client.ip }]);
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
