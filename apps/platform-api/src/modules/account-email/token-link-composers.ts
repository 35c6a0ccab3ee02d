import { Injectable } from '@nestjs/common';
import type { AccountEmailPayload, TokenLinkEmailKind, TokenLinkEmailPayload } from './account-email.queue.js';

/** Builds a token-link email at send time (the module that owns the tokens provides it). */
export interface TokenLinkComposer {
  /** The message with its link, or null when the token is no longer live (nothing is sent). */
  compose(payload: TokenLinkEmailPayload): Promise<AccountEmailPayload | null>;
  /** Called once the message is delivered. */
  delivered(payload: TokenLinkEmailPayload): Promise<void>;
}

/**
 * Where the auth module registers its composers: this module delivers account emails and the auth
 * module (which imports it) owns the tokens, so the dependency points one way only.
 */
@Injectable()
export class TokenLinkComposers {
  private readonly composers = new Map<TokenLinkEmailKind, TokenLinkComposer>();

  register(kind: TokenLinkEmailKind, composer: TokenLinkComposer): void {
    this.composers.set(kind, composer);
  }

  get(kind: TokenLinkEmailKind): TokenLinkComposer | undefined {
    return this.composers.get(kind);
  }
}
