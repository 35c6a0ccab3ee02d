import { describe, expect, it } from '@jest/globals';
import { sendingLimiter } from '../src/modules/delivery/email-queue-options.js';

describe('sendingLimiter (BullMQ limiter for MAIL_RATE_PER_SECOND)', () => {
  it('spaces provider-like rates one email per slot', () => {
    expect(sendingLimiter(14)).toEqual({ max: 1, duration: 72 });
    expect(sendingLimiter(5)).toEqual({ max: 1, duration: 200 });
    expect(sendingLimiter(1)).toEqual({ max: 1, duration: 1000 });
  });

  it('counts high rates per second', () => {
    expect(sendingLimiter(10_000)).toEqual({ max: 10_000, duration: 1000 });
  });

  it('never allows more than the rate, and stays within 5% of it', () => {
    for (let rate = 1; rate <= 500; rate += 1) {
      const { max, duration } = sendingLimiter(rate);
      const allowed = (max * 1000) / duration;
      expect(allowed).toBeLessThanOrEqual(rate);
      expect(allowed).toBeGreaterThanOrEqual(rate * 0.95);
    }
  });
});
