import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { AccessCacheService, type CachedSession } from '../../core/auth/access-cache.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { hasAllFeatures } from '../../core/auth/feature-match.js';
import { RateLimiterService, type RateRule } from '../../core/rate-limit/rate-limiter.service.js';
import { scopeOf } from '../../core/scope/tenant-scope.js';
import { UsersRepository } from '../users/users.repository.js';
import { AccountsRepository } from './accounts.repository.js';
import { AuthService } from './auth.service.js';
import { hashPassword, verifyPassword } from './credentials.js';

export const DEFAULT_LOCALE = 'en';

/**
 * Credential changes check the current password; per user, so a stolen token cannot use this
 * endpoint to guess the password faster than the login limits allow.
 */
const CREDENTIAL_CHANGE_PER_USER: RateRule = { name: 'profile-credentials-user', points: 5, durationSeconds: 300 };

export interface ProfileUpdate {
  email?: string;
  password?: string;
  currentPassword?: string;
}

/** The email the caller's session carries, if the session is theirs and still knows it. */
function sessionEmail(session: CachedSession | null | undefined, auth: AuthContext): string | null {
  return session?.userId === auth.userId ? session.email : null;
}

/** The caller's own account: profile, locale and feature checks. */
@Injectable()
export class ProfileService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsRepository,
    private readonly users: UsersRepository,
    private readonly auth: AuthService,
    private readonly rateLimiter: RateLimiterService,
    private readonly access: AccessCacheService,
  ) {}

  /**
   * The email comes with the caller's session, which the guard has just checked (a cached read, so
   * the profile costs no SQL per call); every change of a user's email drops that user's cached
   * sessions on every instance (user commands: invalidateUser; this service: invalidateProfile).
   */
  getProfile(auth: AuthContext): { email: string; roles: string[] } | Promise<{ email: string; roles: string[] }> {
    // Without a promise when the session is cached (the guard has just read it): see AccessAuthenticator.
    const email = sessionEmail(this.access.cachedLiveSession(auth.sessionId), auth);
    return email ? { email, roles: auth.acl.roleNames } : this.loadProfile(auth);
  }

  private async loadProfile(auth: AuthContext): Promise<{ email: string; roles: string[] }> {
    let email = sessionEmail(await this.access.liveSession(auth.sessionId), auth);
    if (!email) {
      const user = await this.accounts.find(this.dataSource, scopeOf(auth), auth.userId);
      if (!user) throw DomainError.notFound('user not found');
      email = user.email;
    }
    return { email, roles: auth.acl.roleNames };
  }

  /**
   * Changes email and/or password. Both need the current password (a bare access token is not
   * enough to take the account over); a new password ends the caller's other sessions.
   */
  async updateProfile(auth: AuthContext, input: ProfileUpdate): Promise<{ ok: true; email: string }> {
    if (input.email === undefined && input.password === undefined) {
      throw DomainError.badRequest('nothing to update: give email or password');
    }
    await this.assertCurrentPassword(auth, input.currentPassword);
    const scope = scopeOf(auth);
    const email = input.email?.trim().toLowerCase();
    if (email && (await this.users.emailTaken(this.dataSource, scope, { email, exceptUserId: auth.userId }))) {
      throw DomainError.badRequest('email already in use');
    }
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const updated = await this.users.updateCredentials(this.dataSource, scope, { userId: auth.userId, email: email ?? null, passwordHash });
    if (!updated) throw DomainError.notFound('user not found');
    if (email) await this.access.invalidateProfile(auth.userId);
    if (passwordHash) await this.auth.revokeAllSessions(scope, { userId: auth.userId, exceptSessionId: auth.sessionId });
    return { ok: true, email: updated };
  }

  /** Which of the asked features the caller holds; `ok` only when it holds all of them. */
  checkFeatures(auth: AuthContext, features: string[]): { ok: boolean; granted: string[]; userId: string } {
    const granted = features.filter((f) => auth.isSuperAdmin || hasAllFeatures(auth.acl.features, [f]));
    return { ok: granted.length === features.length, granted, userId: auth.userId };
  }

  async getLocale(auth: AuthContext): Promise<string> {
    return (await this.accounts.getLocale(this.dataSource, scopeOf(auth), auth.userId)) ?? DEFAULT_LOCALE;
  }

  async setLocale(auth: AuthContext, locale: string): Promise<string> {
    await this.users.setLocale(this.dataSource, scopeOf(auth), { userId: auth.userId, locale });
    return locale;
  }

  /** 400 without it, 403 when it is wrong (after the per-user limit, 429). */
  private async assertCurrentPassword(auth: AuthContext, currentPassword: string | undefined): Promise<void> {
    if (!currentPassword) throw DomainError.badRequest('currentPassword is required to change the email or the password');
    await this.rateLimiter.consume([{ rule: CREDENTIAL_CHANGE_PER_USER, key: auth.userId }]);
    const user = await this.accounts.find(this.dataSource, scopeOf(auth), auth.userId);
    if (!user) throw DomainError.notFound('user not found');
    if (!(await verifyPassword(user.passwordHash, currentPassword))) throw DomainError.forbidden('current password is incorrect');
  }
}
