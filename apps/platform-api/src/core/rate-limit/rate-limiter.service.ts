import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { ErrorCode } from '@app/contracts';
import { clientIpBucket, DomainError, REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';

export interface RateRule {
  /** Unique name: becomes part of the Redis key. */
  name: string;
  points: number;
  durationSeconds: number;
}

/**
 * What one check counts under: a client address (`ip`, bucketed: IPv6 per /64), optionally with a
 * subject (an email, a token hash) for per-IP-and-account limits; or any other `key` (a user id).
 */
export type RateCheck = { rule: RateRule } & ({ ip: string; subject?: string } | { key: string });

function keyOf(check: RateCheck): string {
  if ('key' in check) return check.key;
  const bucket = clientIpBucket(check.ip);
  return check.subject === undefined ? bucket : `${bucket}:${check.subject}`;
}

/**
 * Fixed-window limits shared by every instance through Redis (decisions.md "Rate limits").
 * If Redis is down, each instance falls back to an in-memory limiter rather than failing open.
 */
@Injectable()
export class RateLimiterService {
  private readonly limiters = new Map<string, RateLimiterRedis>();

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {}

  /** Consumes one point from each (rule, key); the first exhausted one answers 429 with Retry-After. */
  async consume(checks: RateCheck[], message = 'too many attempts, try again later'): Promise<void> {
    for (const check of checks) {
      try {
        await this.limiter(check.rule).consume(keyOf(check));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          const retryAfter = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
          throw new DomainError(ErrorCode.RateLimitExceeded, message, { headers: { 'Retry-After': String(retryAfter) } });
        }
        throw rejection;
      }
    }
  }

  private limiter(rule: RateRule): RateLimiterRedis {
    let limiter = this.limiters.get(rule.name);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: this.redis,
        keyPrefix: `${this.settings.queuePrefix}:rl:${rule.name}`,
        points: rule.points,
        duration: rule.durationSeconds,
        insuranceLimiter: new RateLimiterMemory({ points: rule.points, duration: rule.durationSeconds }),
      });
      this.limiters.set(rule.name, limiter);
    }
    return limiter;
  }
}
