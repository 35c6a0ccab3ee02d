import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { type AuthTokenPurpose, AuthTokensRepository } from './auth-tokens.repository.js';
import { hashToken, newOpaqueToken } from './credentials.js';
import { TokenSealer } from './token-sealing.js';

/** decisions.md: reset tokens last 1 hour, invitation setup tokens 48 hours; both single use. */
export const TOKEN_TTL_SECONDS: Record<AuthTokenPurpose, number> = {
  password_reset: 60 * 60,
  invitation: 48 * 60 * 60,
};

@Injectable()
export class AuthTokensService {
  private readonly sealer: TokenSealer;

  constructor(
    private readonly dataSource: DataSource,
    private readonly tokens: AuthTokensRepository,
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
  ) {
    this.sealer = new TokenSealer(config.jwtSecret);
  }

  /**
   * Issues a token; an invitation invalidates the user's earlier invitation tokens. (Positional
   * `tenantId, userId`: the specs call it so; the system issues it, hence a system scope.)
   */
  async issue(
    tenantId: string,
    userId: string,
    purpose: AuthTokenPurpose,
    manager: EntityManager = this.dataSource.manager,
  ): Promise<{ id: string; token: string; expiresAt: Date }> {
    const scope = systemScope(tenantId);
    if (purpose === 'invitation') await this.tokens.voidInvitations(manager, scope, userId);
    const id = randomUUID();
    const token = newOpaqueToken();
    const { expiresAt } = await this.tokens.insert(manager, scope, {
      id,
      userId,
      purpose,
      tokenHash: hashToken(token),
      sealedToken: this.sealer.seal(id, token),
      ttlSeconds: TOKEN_TTL_SECONDS[purpose],
    });
    return { id, token, expiresAt };
  }

  /**
   * The raw token of a live token row, for the worker that emails its link; null when the token was
   * used, replaced, expired, or its link already sent.
   */
  async unsealForEmail(id: string): Promise<{ purpose: AuthTokenPurpose; token: string } | null> {
    const row = await this.tokens.findSealed(this.dataSource, id);
    if (!row) return null;
    const token = this.sealer.open(id, row.sealedToken);
    return token ? { purpose: row.purpose, token } : null;
  }

  /** After the email is delivered: nothing in the database leads back to the token any more. */
  async forgetSealed(id: string): Promise<void> {
    await this.tokens.eraseSealed(this.dataSource, id);
  }

  /**
   * Claims a live token atomically: of two concurrent redemptions exactly one gets the row.
   * Returns null for unknown, used or expired tokens.
   */
  redeem(token: string, manager: EntityManager): Promise<{ tenantId: string; userId: string; purpose: AuthTokenPurpose } | null> {
    return this.tokens.claim(manager, hashToken(token));
  }
}
