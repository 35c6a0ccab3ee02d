import type { QueueWorkerOptions } from '@app/service-kit';
import type { MailConfig } from '../../config/mail-config.js';

/** Up to this rate the limiter spaces emails one by one; above it, it counts per second. */
const SPACED_UP_TO_PER_SECOND = 50;

/**
 * BullMQ's limiter for MAIL_RATE_PER_SECOND. At provider-like rates (the default 14/s) it lets one
 * email start per slot of ceil(1000 / rate) ms: never above the rate, and no burst of `rate` emails at
 * the start of every second that a provider measuring over a sliding window could count twice
 * (14/s gives a 72 ms slot, 13.9 emails/s). Higher rates are counted per second.
 */
export function sendingLimiter(ratePerSecond: number): { max: number; duration: number } {
  if (ratePerSecond <= SPACED_UP_TO_PER_SECOND) return { max: 1, duration: Math.ceil(1000 / ratePerSecond) };
  return { max: ratePerSecond, duration: 1000 };
}

/**
 * The email queue's worker settings. BullMQ's limiter is global per queue (kept in Redis), so
 * MAIL_RATE_PER_SECOND holds for the whole deployment however many workers run; each worker needs a
 * concurrency of at least rate x SMTP round trip to reach it.
 */
export function emailQueueWorkerOptions(config: MailConfig): QueueWorkerOptions {
  return {
    concurrency: config.sendConcurrency,
    limiter: sendingLimiter(config.ratePerSecond),
    lockDuration: config.sendLockSeconds * 1000,
    stalledInterval: Math.max(1000, Math.floor((config.sendLockSeconds * 1000) / 2)),
  };
}
