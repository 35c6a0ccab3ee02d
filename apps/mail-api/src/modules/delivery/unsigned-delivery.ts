import type { MailConfig } from '../../config/mail-config.js';

/** Says, in a delivered message, that it went out unsigned and why (never settable by a sender). */
export const UNSIGNED_HEADER = 'X-Mail-Api-Unsigned';

/**
 * Whether mail from a domain that is not VERIFIED may go out at all: only into the development outbox
 * (no MAIL_SMTP_URL, NODE_ENV not production). A plain `npm start` has no DNS anyone controls, so
 * without this the platform's own emails (`no-reply@example.com`) could never be read by a developer;
 * the messages stay on disk and are marked unsigned. With SMTP, or in production, the rule holds:
 * 403 at request time, FAILED in the worker.
 */
export function unverifiedSendersAllowed(config: Pick<MailConfig, 'env' | 'smtpUrl'>): boolean {
  return !config.smtpUrl && config.env !== 'production';
}

/** The X-Mail-Api-Unsigned value of a message from `domain`, or null when such mail may not be sent. */
export function unsignedReason(config: Pick<MailConfig, 'env' | 'smtpUrl'>, domain: string): string | null {
  return unverifiedSendersAllowed(config) ? `sender domain ${domain} is not verified (outbox transport, ${config.env})` : null;
}
