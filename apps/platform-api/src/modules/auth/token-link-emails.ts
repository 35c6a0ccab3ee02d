import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import type { AccountEmailPayload, TokenLinkEmailKind, TokenLinkEmailPayload } from '../account-email/account-email.queue.js';
import { TokenLinkComposers } from '../account-email/token-link-composers.js';
import { AuthTokensService } from './auth-tokens.service.js';

/**
 * The reset and invitation emails, written when the worker sends them: only then is the token
 * unsealed and the link (decisions.md: `{PLATFORM_APP_URL}/reset-password?token=...`,
 * `/setup-password?token=...`) built, so neither ever sits in a queued job.
 */
@Injectable()
export class TokenLinkEmails implements OnModuleInit {
  private readonly logger = new Logger(TokenLinkEmails.name);

  constructor(
    private readonly composers: TokenLinkComposers,
    private readonly tokens: AuthTokensService,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  onModuleInit(): void {
    for (const kind of ['password_reset', 'invitation'] as const) {
      this.composers.register(kind, {
        compose: (payload) => this.compose(kind, payload),
        delivered: (payload) => this.tokens.forgetSealed(payload.tokenId),
      });
    }
  }

  private async compose(kind: TokenLinkEmailKind, payload: TokenLinkEmailPayload): Promise<AccountEmailPayload | null> {
    const unsealed = await this.tokens.unsealForEmail(payload.tokenId);
    if (!unsealed || unsealed.purpose !== kind) {
      this.logger.log({ tokenId: payload.tokenId, kind }, 'token no longer live (used, replaced, expired or already sent): email skipped');
      return null;
    }
    return kind === 'password_reset' ? this.resetEmail(payload.to, unsealed.token) : this.invitationEmail(payload.to, unsealed.token);
  }

  private resetEmail(to: string, token: string): AccountEmailPayload {
    const link = this.link('reset-password', token);
    return {
      kind: 'password_reset',
      to,
      subject: 'Reset your password',
      text: `Someone asked to reset the password of this account. Open ${link} within one hour to choose a new one. If it was not you, ignore this email.`,
      html: `<p>Someone asked to reset the password of this account.</p><p><a href="${link}">Choose a new password</a> (valid for one hour).</p><p>If it was not you, ignore this email.</p>`,
    };
  }

  private invitationEmail(to: string, token: string): AccountEmailPayload {
    const link = this.link('setup-password', token);
    return {
      kind: 'invitation',
      to,
      subject: 'You have been invited',
      text: `An account was created for you. Open ${link} within 48 hours to choose your password.`,
      html: `<p>An account was created for you.</p><p><a href="${link}">Choose your password</a> (valid for 48 hours).</p>`,
    };
  }

  private link(path: string, token: string): string {
    return `${this.config.appUrl}/${path}?token=${encodeURIComponent(token)}`;
  }
}
