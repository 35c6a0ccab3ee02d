import { Inject, Injectable, Logger } from '@nestjs/common';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import type { AccountEmailPayload } from './account-email.queue.js';

/** Raised for answers worth retrying (network, 429, 5xx); a 4xx other than 429 is final. */
export class MailApiRetryableError extends Error {}

/**
 * Sends through the mail-api's `POST /v1/send` with `PLATFORM_MAIL_API_KEY`. With no key configured
 * (local development) the message is written to the log instead (decisions.md "platform to mail").
 */
@Injectable()
export class MailApiClient {
  private readonly logger = new Logger(MailApiClient.name);

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  async send(message: AccountEmailPayload, idempotencyKey: string): Promise<{ delivered: 'mail-api' | 'log' }> {
    const { url, key, from } = this.config.mailApi;
    if (!key) {
      this.logger.log(
        { to: message.to, subject: message.subject, kind: message.kind, text: message.text },
        'account email (no PLATFORM_MAIL_API_KEY: logged, not sent)',
      );
      return { delivered: 'log' };
    }
    let response: Response;
    try {
      response = await fetch(new URL('/v1/send', url), {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}`, 'Idempotency-Key': idempotencyKey },
        body: JSON.stringify({ to: message.to, from: message.from || from, subject: message.subject, body: message.html }),
        signal: AbortSignal.timeout(10_000),
      });
    } catch (err) {
      throw new MailApiRetryableError(`mail-api unreachable: ${(err as Error).message}`);
    }
    if (response.ok) return { delivered: 'mail-api' };
    const detail = (await response.text()).slice(0, 500);
    if (response.status === 429 || response.status >= 500) {
      throw new MailApiRetryableError(`mail-api answered ${response.status}: ${detail}`);
    }
    throw new Error(`mail-api refused the message (${response.status}): ${detail}`);
  }
}
