import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { hasAllFeatures } from '../../core/auth/feature-match.js';
import { AuthService } from './auth.service.js';
import { hashPassword } from './credentials.js';

export const DEFAULT_LOCALE = 'en';

/** The caller's own account: profile, locale and feature checks. */
@Injectable()
export class ProfileService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly auth: AuthService,
  ) {}

  async getProfile(auth: AuthContext): Promise<{ email: string; roles: string[] }> {
    const [user] = await this.dataSource.query(
      'SELECT email FROM users WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL',
      [auth.userId, auth.tenantId],
    );
    if (!user) throw DomainError.notFound('user not found');
    return { email: user.email, roles: auth.acl.roleNames };
  }

  /** Changes email and/or password; a new password ends the caller's other sessions. */
  async updateProfile(auth: AuthContext, input: { email?: string; password?: string }): Promise<{ ok: true; email: string }> {
    if (input.email === undefined && input.password === undefined) {
      throw DomainError.badRequest('nothing to update: give email or password');
    }
    const email = input.email?.trim().toLowerCase();
    if (email) {
      const [taken] = await this.dataSource.query(
        'SELECT 1 FROM users WHERE tenant_id = $1 AND lower(email) = $2 AND id <> $3 AND deleted_at IS NULL',
        [auth.tenantId, email, auth.userId],
      );
      if (taken) throw DomainError.badRequest('email already in use');
    }
    const passwordHash = input.password ? await hashPassword(input.password) : null;
    const [rows] = await this.dataSource.query(
      `UPDATE users SET email = COALESCE($3, email), password_hash = COALESCE($4, password_hash), updated_at = now()
        WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL RETURNING email`,
      [auth.userId, auth.tenantId, email ?? null, passwordHash],
    );
    if (!rows[0]) throw DomainError.notFound('user not found');
    if (passwordHash) await this.auth.revokeAllSessions(auth.tenantId, auth.userId, auth.sessionId);
    return { ok: true, email: rows[0].email };
  }

  /** Which of the asked features the caller holds; `ok` only when it holds all of them. */
  checkFeatures(auth: AuthContext, features: string[]): { ok: boolean; granted: string[]; userId: string } {
    const granted = features.filter((f) => auth.isSuperAdmin || hasAllFeatures(auth.acl.features, [f]));
    return { ok: granted.length === features.length, granted, userId: auth.userId };
  }

  async getLocale(auth: AuthContext): Promise<string> {
    const [user] = await this.dataSource.query('SELECT locale FROM users WHERE id = $1 AND tenant_id = $2', [
      auth.userId,
      auth.tenantId,
    ]);
    return user?.locale ?? DEFAULT_LOCALE;
  }

  async setLocale(auth: AuthContext, locale: string): Promise<string> {
    await this.dataSource.query('UPDATE users SET locale = $3, updated_at = now() WHERE id = $1 AND tenant_id = $2', [
      auth.userId,
      auth.tenantId,
      locale,
    ]);
    return locale;
  }
}
