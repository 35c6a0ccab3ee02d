import type { QueueWorkerOptions } from '@app/service-kit';
import type { MailConfig } from '../../config/mail-config.js';

/** Up to this rate the limiter spaces emails in small slots; above it, it counts per second. */
const SPACED_UP_TO_PER_SECOND = 50;
/** The most a spaced slot lets start back to back. */
const MAX_EMAILS_PER_SLOT = 8;
/** What rounding a slot up to whole milliseconds may cost against the configured rate. */
const MAX_ROUNDING_LOSS = 0.005;

/** Whether `sendingLimiter` spaces this rate in slots (provider-like rates) rather than counting per second. */
export function isSpacedRate(ratePerSecond: number): boolean {
  return ratePerSecond <= SPACED_UP_TO_PER_SECOND;
}

/**
 * BullMQ's limiter for MAIL_RATE_PER_SECOND. At provider-like rates (the default 14/s) it lets a few
 * emails start per short slot: never above the rate, and no burst of `rate` emails at the start of
 * every second that a provider measuring over a sliding window could count twice. The slot holds as
 * few emails as keep the rounding of its length to whole milliseconds within 0.5% of the rate: one
 * email per ceil(1000 / 14) = 72 ms would cap 14/s at 13.89/s, and with the limiter's own latency per
 * slot it delivered 13.72/s (bench/campaign/delivery.mjs); two per 143 ms allow 13.99/s. Higher rates
 * are counted per second.
 */
export function sendingLimiter(ratePerSecond: number): { max: number; duration: number } {
  if (!isSpacedRate(ratePerSecond)) return { max: ratePerSecond, duration: 1000 };
  for (let max = 1; ; max++) {
    const duration = Math.ceil((max * 1000) / ratePerSecond);
    if (max === MAX_EMAILS_PER_SLOT || (max * 1000) / duration >= ratePerSecond * (1 - MAX_ROUNDING_LOSS)) return { max, duration };
  }
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
