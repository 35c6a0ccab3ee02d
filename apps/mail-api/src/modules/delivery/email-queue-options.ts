import type { QueueWorkerOptions } from '@app/service-kit';
import type { MailConfig } from '../../config/mail-config.js';

/**
 * The email queue's worker settings. BullMQ's limiter is global per queue (kept in Redis), so
 * MAIL_RATE_PER_SECOND holds for the whole deployment however many workers run; each worker needs a
 * concurrency of at least rate x SMTP round trip to reach it.
 */
export function emailQueueWorkerOptions(config: MailConfig): QueueWorkerOptions {
  return {
    concurrency: config.sendConcurrency,
    limiter: { max: config.ratePerSecond, duration: 1000 },
    lockDuration: config.sendLockSeconds * 1000,
    stalledInterval: Math.max(1000, Math.floor((config.sendLockSeconds * 1000) / 2)),
  };
}
