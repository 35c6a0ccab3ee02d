import { describe, expect, it } from '@jest/globals';
import { isSpacedRate, sendingLimiter } from '../src/modules/delivery/email-queue-options.js';

describe('sendingLimiter (BullMQ limiter for MAIL_RATE_PER_SECOND)', () => {
  it('spaces provider-like rates in slots of as few emails as keep the rate within 0.5%', () => {
    // One per 72 ms would cap the default 14/s at 13.89/s; two per 143 ms allow 13.99/s.
    expect(sendingLimiter(14)).toEqual({ max: 2, duration: 143 });
    expect(sendingLimiter(5)).toEqual({ max: 1, duration: 200 });
    expect(sendingLimiter(1)).toEqual({ max: 1, duration: 1000 });
    expect(sendingLimiter(30)).toEqual({ max: 2, duration: 67 });
  });

  it('counts high rates per second', () => {
    expect(sendingLimiter(10_000)).toEqual({ max: 10_000, duration: 1000 });
    expect(isSpacedRate(10_000)).toBe(false);
    expect(isSpacedRate(14)).toBe(true);
  });

  it('never allows more than the rate, stays within 0.5% of it, and never starts more than 8 emails back to back', () => {
    for (let rate = 1; rate <= 500; rate += 1) {
      const { max, duration } = sendingLimiter(rate);
      const allowed = (max * 1000) / duration;
      expect(allowed).toBeLessThanOrEqual(rate);
      expect(allowed).toBeGreaterThanOrEqual(rate * 0.995);
      if (isSpacedRate(rate)) expect(max).toBeLessThanOrEqual(8);
    }
  });
});
