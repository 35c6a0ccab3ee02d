import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError, QueueService } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { EventBus } from '../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { AccountEmailJob, AccountEmailQueue, type PasswordResetRequestedPayload } from '../account-email/account-email.queue.js';
import { AccountEmailService } from '../account-email/account-email.service.js';
import { UsersRepository } from '../users/users.repository.js';
import { AccountsRepository } from './accounts.repository.js';
import { AuthService } from './auth.service.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { hashPassword } from './credentials.js';

const RESET_PER_IP: RateRule = { name: 'reset-ip', points: 10, durationSeconds: 60 };
const RESET_PER_IP_EMAIL: RateRule = { name: 'reset-ip-email', points: 3, durationSeconds: 60 };
const RESET_CONFIRM_PER_IP: RateRule = { name: 'reset-confirm-ip', points: 5, durationSeconds: 300 };

/**
 * Password reset and invitation redemption. A reset request only validates and queues: the worker
 * resolves the account, so known and unknown emails answer alike and in the same time.
 */
@Injectable()
export class PasswordResetService {
  private readonly logger = new Logger(PasswordResetService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly users: UsersRepository,
    private readonly queues: QueueService,
    private readonly tokens: AuthTokensService,
    private readonly emails: AccountEmailService,
    private readonly auth: AuthService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly eventBus: EventBus,
  ) {}

  /** decisions.md: a request with an `Origin` outside the allowed origins is refused; none is fine. */
  assertAllowedOrigin(origin: string | undefined): void {
    if (origin !== undefined && !this.config.allowedOrigins.includes(origin)) {
      throw DomainError.badRequest('invalid request origin');
    }
  }

  async requestReset(email: string, tenantId: string | null, client: { ip: string; origin?: string }): Promise<void> {
    this.assertAllowedOrigin(client.origin);
    const normalized = email.trim().toLowerCase();
    await this.rateLimiter.consume([
      { rule: RESET_PER_IP, ip: client.ip },
      { rule: RESET_PER_IP_EMAIL, ip: client.ip, subject: normalized },
    ]);
    const payload: PasswordResetRequestedPayload = { email: normalized, tenantId, requestedAt: new Date().toISOString(), ip: client.ip };
    await this.queues.add(AccountEmailQueue, AccountEmailJob.PasswordResetRequested, payload, { attempts: 5 });
  }

  /**
   * Worker side of a reset request: issue a token and queue the email, or do nothing for unknown
   * accounts. The email job names the token row only; the link is built when it is sent.
   */
  async processResetRequest(payload: PasswordResetRequestedPayload): Promise<{ sent: boolean }> {
    const users = await this.accounts.findForReset(this.dataSource, { email: payload.email, tenantId: payload.tenantId });
    for (const user of users) {
      const issued = await this.tokens.issue(user.tenantId, user.id, 'password_reset');
      await this.emails.queueTokenLink({ kind: 'password_reset', to: user.email, tokenId: issued.id });
      // Emitted by the worker for real accounts only: the request itself reveals nothing.
      await this.eventBus.emit({
        id: PlatformEventId.PasswordResetRequested,
        tenantId: user.tenantId,
        organizationId: null,
        payload: { userId: user.id, ip: payload.ip, requestedAt: payload.requestedAt },
      });
    }
    return { sent: users.length > 0 };
  }

  /**
   * Sends (or re-sends) an invitation: a new 48-hour setup token, earlier ones invalidated. The users
   * module's InvitationsService calls it (positional `tenantId, userId`: the specs call it so too).
   */
  async sendInvitation(tenantId: string, userId: string): Promise<void> {
    const user = await this.accounts.find(this.dataSource, systemScope(tenantId), userId);
    if (!user) throw DomainError.notFound('user not found');
    if (user.passwordHash) throw DomainError.conflict('user already has a password');
    const issued = await this.tokens.issue(tenantId, userId, 'invitation');
    await this.emails.queueTokenLink({ kind: 'invitation', to: user.email, tokenId: issued.id });
  }

  /** Redeems a reset or setup token: sets the password and ends every session of the user. */
  async confirm(token: string, password: string, ip: string): Promise<void> {
    await this.rateLimiter.consume([{ rule: RESET_CONFIRM_PER_IP, ip }]);
    const passwordHash = await hashPassword(password);
    const redeemed = await this.dataSource.transaction(async (tx) => {
      const claim = await this.tokens.redeem(token, tx);
      if (!claim) return null;
      await this.users.setPassword(tx, systemScope(claim.tenantId), { userId: claim.userId, passwordHash });
      return claim;
    });
    if (!redeemed) throw DomainError.badRequest('invalid or expired token');
    await this.auth.revokeAllSessions(systemScope(redeemed.tenantId), { userId: redeemed.userId });
    await this.eventBus.emit({
      id: PlatformEventId.PasswordResetCompleted,
      tenantId: redeemed.tenantId,
      organizationId: null,
      payload: { userId: redeemed.userId, purpose: redeemed.purpose },
    });
    this.logger.log({ userId: redeemed.userId, purpose: redeemed.purpose }, 'password set through token');
  }
}
