import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { reachOf } from '../../core/scope/tenant-reach.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { PasswordResetService } from '../auth/password-reset.service.js';
import { assertUserInCallerOrganizations } from './user-access.policy.js';
import { UsersRepository } from './users.repository.js';

/** decisions.md "Rate limits": resend invite 3 per 300 s, counted per client IP. */
export const RESEND_INVITE_PER_IP: RateRule = { name: 'resend-invite', points: 3, durationSeconds: 300 };

/**
 * Invitations of users who have no password yet: the one sent after a creation without a password, and
 * POST /auth/users/resend-invite. The token and its email are the auth module's (PasswordResetService).
 */
@Injectable()
export class InvitationsService {
  private readonly logger = new Logger(InvitationsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly users: UsersRepository,
    private readonly passwordReset: PasswordResetService,
    private readonly rateLimiter: RateLimiterService,
  ) {}

  /** A new 48-hour setup token (earlier ones invalidated) and email, for a user who has no password yet. */
  async resendInvite(auth: AuthContext, userId: string, client: { ip: string; origin?: string }): Promise<{ ok: true }> {
    this.passwordReset.assertAllowedOrigin(client.origin);
    await this.rateLimiter.consume([{ rule: RESEND_INVITE_PER_IP, ip: client.ip }]);
    // The users service's visibility rule: the caller's tenant (404 otherwise), its organizations (403).
    const user = await this.users.findActive(this.dataSource, reachOf(auth), { id: userId });
    if (!user) throw DomainError.notFound('user not found');
    assertUserInCallerOrganizations(auth, user);
    if (user.hasPassword) throw DomainError.conflict('user already has a password');
    await this.passwordReset.sendInvitation(user.tenantId, user.id);
    return { ok: true };
  }

  /**
   * After the user is committed: a failure here (Redis down) must not undo or hide the account, which
   * exists either way; POST /auth/users/resend-invite is the way to try again.
   */
  async inviteCreatedUser(scope: TenantScope, userId: string): Promise<void> {
    try {
      await this.passwordReset.sendInvitation(scope.tenantId, userId);
    } catch (err) {
      this.logger.error({ err, tenantId: scope.tenantId, userId }, 'user created but the invitation could not be queued; resend it');
    }
  }
}
