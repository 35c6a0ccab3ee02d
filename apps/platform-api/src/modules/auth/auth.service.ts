import { Inject, Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { AccessCacheService } from '../../core/auth/access-cache.service.js';
import { AclResolverService } from '../../core/auth/acl-resolver.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ACCESS_TOKEN_TTL_SECONDS, type AccessTokenClaims } from '../../core/auth/jwt-claims.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { scopeOf, systemScope, type TenantScope } from '../../core/scope/tenant-scope.js';
import { EventBus } from '../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { AccountsRepository } from './accounts.repository.js';
import { hashPassword, hashToken, newOpaqueToken, verifyPassword } from './credentials.js';
import { SessionsRepository } from './sessions.repository.js';

const SESSION_TTL_SECONDS = { remember: 30 * 24 * 60 * 60, default: 8 * 60 * 60 };

const LOGIN_PER_IP: RateRule = { name: 'login-ip', points: 20, durationSeconds: 60 };
const LOGIN_PER_IP_EMAIL: RateRule = { name: 'login-ip-email', points: 5, durationSeconds: 60 };
const REFRESH_PER_IP: RateRule = { name: 'refresh-ip', points: 60, durationSeconds: 60 };
const REFRESH_PER_IP_TOKEN: RateRule = { name: 'refresh-ip-token', points: 15, durationSeconds: 60 };

export interface LoginResult {
  token: string;
  sessionToken: string;
  sessionExpiresAt: Date;
  refreshToken: string | null;
}

/** Logins, sessions and access tokens (decisions.md "Sessions and tokens"). */
@Injectable()
export class AuthService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly sessions: SessionsRepository,
    private readonly jwt: JwtService,
    private readonly cache: AccessCacheService,
    private readonly resolver: AclResolverService,
    private readonly rateLimiter: RateLimiterService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
    private readonly eventBus: EventBus,
  ) {}

  async login(
    input: { email: string; password: string; remember: boolean; tenantId?: string },
    client: { ip: string; userAgent: string | null },
  ): Promise<LoginResult> {
    const email = input.email.trim().toLowerCase();
    await this.rateLimiter.consume([
      { rule: LOGIN_PER_IP, ip: client.ip },
      { rule: LOGIN_PER_IP_EMAIL, ip: client.ip, subject: email },
    ]);
    // One account, one argon2 verification, however many tenants share the email (an unknown email
    // verifies against a decoy hash, so the time taken tells nothing either).
    const account = await this.accounts.findLoginAccount(this.dataSource, { email, tenantId: input.tenantId ?? null });
    const valid = await verifyPassword(account?.passwordHash ?? null, input.password);
    if (!account || !valid) {
      await this.eventBus.emit({
        id: PlatformEventId.LoginFailed,
        tenantId: account?.tenantId ?? input.tenantId ?? null,
        organizationId: account?.organizationId ?? null,
        payload: { email, ip: client.ip, reason: 'invalid_credentials' },
      });
      throw DomainError.unauthorized('invalid credentials');
    }
    const acl = await this.resolver.resolve(account.id, account.tenantId);
    if (acl.roleIds.length === 0 && !acl.hasCustomAcl) {
      await this.eventBus.emit({
        id: PlatformEventId.LoginFailed,
        tenantId: account.tenantId,
        organizationId: account.organizationId,
        payload: { email, userId: account.id, ip: client.ip, reason: 'no_role' },
      });
      throw DomainError.forbidden('user lacks required role');
    }

    const ttl = input.remember ? SESSION_TTL_SECONDS.remember : SESSION_TTL_SECONDS.default;
    const sessionToken = newOpaqueToken();
    const refreshToken = input.remember ? newOpaqueToken() : null;
    const session = await this.sessions.create(this.dataSource, systemScope(account.tenantId), {
      userId: account.id,
      sessionTokenHash: hashToken(sessionToken),
      refreshTokenHash: refreshToken ? hashToken(refreshToken) : null,
      remember: input.remember,
      ttlSeconds: ttl,
      ip: client.ip,
      userAgent: client.userAgent?.slice(0, 512) ?? null,
    });
    const token = await this.signAccessToken({
      sub: account.id,
      sid: session.id,
      tenantId: account.tenantId,
      orgId: account.organizationId,
      roles: acl.roleNames,
    });
    await this.eventBus.emit({
      id: PlatformEventId.LoginSuccess,
      tenantId: account.tenantId,
      organizationId: account.organizationId,
      payload: { userId: account.id, sessionId: session.id, ip: client.ip, remember: input.remember },
    });
    return { token, sessionToken, sessionExpiresAt: session.expiresAt, refreshToken };
  }

  /** API clients: a refresh token for a fresh access token. */
  async refreshWithRefreshToken(refreshToken: string, ip: string): Promise<{ accessToken: string; expiresIn: number }> {
    await this.rateLimiter.consume([
      { rule: REFRESH_PER_IP, ip },
      { rule: REFRESH_PER_IP_TOKEN, ip, subject: hashToken(refreshToken).slice(0, 32) },
    ]);
    const accessToken = await this.accessTokenForSession('refresh_token_hash', refreshToken);
    return { accessToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  /** Browsers: the `session_token` cookie for a fresh access token. */
  async refreshWithSessionToken(sessionToken: string, ip: string): Promise<{ accessToken: string; expiresIn: number }> {
    await this.rateLimiter.consume([{ rule: REFRESH_PER_IP, ip }]);
    const accessToken = await this.accessTokenForSession('session_token_hash', sessionToken);
    return { accessToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  async logout(auth: AuthContext): Promise<void> {
    await this.sessions.delete(this.dataSource, scopeOf(auth), auth.sessionId);
    // Every instance drops it from its cache and ends the event streams opened with it.
    await this.cache.invalidateSessions([auth.sessionId]);
    await this.eventBus.emit({
      id: PlatformEventId.Logout,
      tenantId: auth.tenantId,
      organizationId: auth.organizationId,
      payload: { userId: auth.userId, sessionId: auth.sessionId },
    });
  }

  /** Ends every session of a user in the scope's tenant (password reset, password change elsewhere, deletion). */
  async revokeAllSessions(scope: TenantScope, input: { userId: string; exceptSessionId?: string }): Promise<void> {
    const ended = await this.sessions.deleteOfUser(this.dataSource, scope, input);
    // By id, not by user: the kept session's event streams must stay open.
    await this.cache.invalidateSessions(ended);
  }

  hashPassword(password: string): Promise<string> {
    return hashPassword(password);
  }

  private async accessTokenForSession(column: 'refresh_token_hash' | 'session_token_hash', token: string): Promise<string> {
    const session = await this.sessions.findRefreshable(this.dataSource, { column, tokenHash: hashToken(token) });
    if (!session) throw DomainError.unauthorized('invalid or expired token');
    const acl = await this.resolver.resolve(session.userId, session.tenantId);
    return this.signAccessToken({
      sub: session.userId,
      sid: session.id,
      tenantId: session.tenantId,
      orgId: session.organizationId,
      roles: acl.roleNames,
    });
  }

  private signAccessToken(claims: AccessTokenClaims): Promise<string> {
    return this.jwt.signAsync({ ...claims }, { secret: this.config.jwtSecret, algorithm: 'HS256', expiresIn: ACCESS_TOKEN_TTL_SECONDS });
  }
}
