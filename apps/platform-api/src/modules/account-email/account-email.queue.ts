import type { JobsOptions } from 'bullmq';

/** Account emails: password-reset requests and outgoing messages through the mail-api. */
export const AccountEmailQueue = 'platform-account-email' as const;

export const AccountEmailJob = {
  /** Resolve the account behind a reset request, issue a token and send the link (or nothing). */
  PasswordResetRequested: 'auth.password-reset.requested',
  /** Deliver one message through the mail-api's /v1/send (idempotent by job id). */
  Send: 'email.send',
} as const;

/** `AccountEmailJob.Send`: delivery retried with exponential backoff (the mail-api dedupes by job id). */
export const ACCOUNT_EMAIL_SEND_OPTIONS: JobsOptions = { attempts: 8, backoff: { type: 'exponential', delay: 2000 } };

/** `AccountEmailJob.PasswordResetRequested` (processed by modules/auth). */
export interface PasswordResetRequestedPayload {
  email: string;
  /** Restricts the lookup to one tenant when the client named it. */
  tenantId: string | null;
  requestedAt: string;
  ip: string | null;
}

/** A complete account email, as `AccountEmailJob.Send` carries it. */
export interface AccountEmailPayload {
  to: string;
  subject: string;
  html: string;
  text: string;
  /** Why it is sent (`password_reset`, `invitation`), for logs. */
  kind: string;
  /** Sender; defaults to PLATFORM_MAIL_FROM (notification settings may name their own). */
  from?: string | null;
}

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
