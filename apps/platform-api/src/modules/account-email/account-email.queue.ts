import type { AccountEmailPayload } from '@app/contracts';

/** Emails whose link carries a one-time token: the job names the token row, never the token. */
export type TokenLinkEmailKind = 'password_reset' | 'invitation';

/**
 * The job data of a reset or invitation email (`AccountEmailJob.Send`). Redis holds only this; the
 * worker asks the composer registered for `kind` for the message (with its link) when it sends.
 */
export interface TokenLinkEmailPayload {
  kind: TokenLinkEmailKind;
  to: string;
  tokenId: string;
}

/** What an `AccountEmailJob.Send` job carries: a complete message, or a token-link reference. */
export type AccountEmailJobData = AccountEmailPayload | TokenLinkEmailPayload;

export function isTokenLinkPayload(data: AccountEmailJobData): data is TokenLinkEmailPayload {
  return typeof (data as TokenLinkEmailPayload).tokenId === 'string';
}
