import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { createCommandClient, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

const WINDOW_SECONDS = 60;

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
}

/**
 * `MAIL_RATE_LIMIT_PER_MINUTE` (default 1000) requests per project per fixed 60 s window, counted in
 * Redis so every instance shares the count: one Lua call per request. If Redis fails, each instance
 * counts in memory instead (the limit then applies per instance) rather than failing open or closed.
 *
 * Its own Redis connection, with auto-pipelining: the calls of requests that arrive together leave in
 * one write instead of one each (every keyed request makes one, so this is the API's hottest command).
 */
@Injectable()
export class ApiRateLimiter implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly limiter: RateLimiterRedis;
  readonly limit: number;

  constructor(
    @Inject(REDIS_SETTINGS) settings: RedisSettings,
    @Inject(MAIL_CONFIG) config: MailConfig,
  ) {
    this.limit = config.rateLimitPerMinute;
    this.redis = createCommandClient(settings.url, { enableAutoPipelining: true });
    this.redis.on('error', () => undefined); // the insurance limiter covers it; readiness reports Redis
    this.limiter = new RateLimiterRedis({
      storeClient: this.redis,
      keyPrefix: `${settings.queuePrefix}:mail:rl:api`,
      points: this.limit,
      duration: WINDOW_SECONDS,
      insuranceLimiter: new RateLimiterMemory({ points: this.limit, duration: WINDOW_SECONDS }),
    });
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  async consume(projectId: string): Promise<RateLimitState> {
    try {
      return this.state(true, await this.limiter.consume(projectId));
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return this.state(false, rejection);
      throw rejection;
    }
  }

  private state(allowed: boolean, res: RateLimiterRes): RateLimitState {
    return {
      allowed,
      limit: this.limit,
      remaining: Math.max(0, res.remainingPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }
}
