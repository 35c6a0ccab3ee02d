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
import { EventBus } from '../../core/events/event-bus.service.js';
import { PlatformEventId } from '../../core/events/event-ids.js';
import { hashPassword, hashToken, newOpaqueToken, verifyPassword } from './credentials.js';

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

interface UserRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  password_hash: string | null;
}

/** Logins, sessions and access tokens (decisions.md "Sessions and tokens"). */
@Injectable()
export class AuthService {
  constructor(
    private readonly dataSource: DataSource,
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
      { rule: LOGIN_PER_IP, key: client.ip },
      { rule: LOGIN_PER_IP_EMAIL, key: `${client.ip}:${email}` },
    ]);
    const candidates: UserRow[] = await this.dataSource.query(
      `SELECT id, tenant_id, organization_id, password_hash FROM users
        WHERE lower(email) = $1 AND deleted_at IS NULL AND ($2::uuid IS NULL OR tenant_id = $2)
        ORDER BY created_at LIMIT 10`,
      [email, input.tenantId ?? null],
    );
    let user: UserRow | undefined;
    for (const candidate of candidates) {
      if (await verifyPassword(candidate.password_hash, input.password)) {
        user = candidate;
        break;
      }
    }
    if (candidates.length === 0) await verifyPassword(null, input.password);
    if (!user) {
      await this.eventBus.emit({
        id: PlatformEventId.LoginFailed,
        tenantId: input.tenantId ?? (candidates.length === 1 ? candidates[0].tenant_id : null),
        organizationId: candidates.length === 1 ? candidates[0].organization_id : null,
        payload: { email, ip: client.ip, reason: 'invalid_credentials' },
      });
      throw DomainError.unauthorized('invalid credentials');
    }

    const acl = await this.resolver.resolve(user.id, user.tenant_id);
    if (acl.roleIds.length === 0 && !acl.hasCustomAcl) {
      await this.eventBus.emit({
        id: PlatformEventId.LoginFailed,
        tenantId: user.tenant_id,
        organizationId: user.organization_id,
        payload: { email, userId: user.id, ip: client.ip, reason: 'no_role' },
      });
      throw DomainError.forbidden('user lacks required role');
    }

    const ttl = input.remember ? SESSION_TTL_SECONDS.remember : SESSION_TTL_SECONDS.default;
    const sessionToken = newOpaqueToken();
    const refreshToken = input.remember ? newOpaqueToken() : null;
    const [session] = await this.dataSource.query(
      `INSERT INTO sessions (tenant_id, user_id, session_token_hash, refresh_token_hash, remember, expires_at, ip, user_agent)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6), $7, $8) RETURNING id, expires_at`,
      [user.tenant_id, user.id, hashToken(sessionToken), refreshToken ? hashToken(refreshToken) : null, input.remember, ttl, client.ip, client.userAgent?.slice(0, 512) ?? null],
    );
    const token = await this.signAccessToken({
      sub: user.id,
      sid: session.id,
      tenantId: user.tenant_id,
      orgId: user.organization_id,
      roles: acl.roleNames,
    });
    await this.eventBus.emit({
      id: PlatformEventId.LoginSuccess,
      tenantId: user.tenant_id,
      organizationId: user.organization_id,
      payload: { userId: user.id, sessionId: session.id, ip: client.ip, remember: input.remember },
    });
    return { token, sessionToken, sessionExpiresAt: session.expires_at, refreshToken };
  }

  /** API clients: a refresh token for a fresh access token. */
  async refreshWithRefreshToken(refreshToken: string, ip: string): Promise<{ accessToken: string; expiresIn: number }> {
    await this.rateLimiter.consume([
      { rule: REFRESH_PER_IP, key: ip },
      { rule: REFRESH_PER_IP_TOKEN, key: `${ip}:${hashToken(refreshToken).slice(0, 32)}` },
    ]);
    const accessToken = await this.accessTokenForSession('refresh_token_hash', refreshToken);
    return { accessToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  /** Browsers: the `session_token` cookie for a fresh access token. */
  async refreshWithSessionToken(sessionToken: string, ip: string): Promise<{ accessToken: string; expiresIn: number }> {
    await this.rateLimiter.consume([{ rule: REFRESH_PER_IP, key: ip }]);
    const accessToken = await this.accessTokenForSession('session_token_hash', sessionToken);
    return { accessToken, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }

  async logout(auth: AuthContext): Promise<void> {
    await this.dataSource.query('DELETE FROM sessions WHERE id = $1 AND tenant_id = $2', [auth.sessionId, auth.tenantId]);
    await this.cache.invalidateSessions([auth.sessionId]);
    await this.eventBus.emit({
      id: PlatformEventId.Logout,
      tenantId: auth.tenantId,
      organizationId: auth.organizationId,
      payload: { userId: auth.userId, sessionId: auth.sessionId },
    });
  }

  /** Ends every session of a user (password reset, password change elsewhere, deletion). */
  async revokeAllSessions(tenantId: string, userId: string, exceptSessionId?: string): Promise<void> {
    await this.dataSource.query(
      'DELETE FROM sessions WHERE tenant_id = $1 AND user_id = $2 AND ($3::uuid IS NULL OR id <> $3)',
      [tenantId, userId, exceptSessionId ?? null],
    );
    await this.cache.invalidateUser(userId);
  }

  hashPassword(password: string): Promise<string> {
    return hashPassword(password);
  }

  private async accessTokenForSession(column: 'refresh_token_hash' | 'session_token_hash', token: string): Promise<string> {
    const rows = await this.dataSource.query(
      `SELECT s.id, s.tenant_id, s.user_id, u.organization_id FROM sessions s
         JOIN users u ON u.id = s.user_id AND u.deleted_at IS NULL
        WHERE s.${column} = $1 AND s.expires_at > now()`,
      [hashToken(token)],
    );
    const session = rows[0];
    if (!session) throw DomainError.unauthorized('invalid or expired token');
    const acl = await this.resolver.resolve(session.user_id, session.tenant_id);
    return this.signAccessToken({
      sub: session.user_id,
      sid: session.id,
      tenantId: session.tenant_id,
      orgId: session.organization_id,
      roles: acl.roleNames,
    });
  }

  private signAccessToken(claims: AccessTokenClaims): Promise<string> {
    return this.jwt.signAsync({ ...claims }, { secret: this.config.jwtSecret, algorithm: 'HS256', expiresIn: ACCESS_TOKEN_TTL_SECONDS });
  }
}
