import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { clientIpBucket, createCommandClient, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';

const WINDOW_SECONDS = 60;

export interface RateLimitState {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetSeconds: number;
  /** What the limit counts, for the 429 message: `requests per minute per project`. */
  scope: string;
}

/** One fixed-window counter in Redis, with an in-memory stand-in while Redis is away. */
class Bucket {
  private readonly limiter: RateLimiterRedis;

  constructor(
    redis: Redis,
    keyPrefix: string,
    readonly limit: number,
    readonly scope: string,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points: limit,
      duration: WINDOW_SECONDS,
      insuranceLimiter: new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS }),
    });
  }

  async consume(key: string): Promise<RateLimitState> {
    try {
      return this.state(true, await this.limiter.consume(key));
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
      scope: this.scope,
    };
  }
}

/**
 * Per-project request budgets, counted in Redis so every instance shares the count (one Lua call per
 * bucket per request). If Redis fails, each instance counts in memory instead (the limit then applies
 * per instance) rather than failing open or closed.
 *
 * - Secret-key requests: `MAIL_RATE_LIMIT_PER_MINUTE` (default 1000) per project.
 * - Public-key requests (`pk_`, shipped to browsers, so anyone can copy one): a budget of their own,
 *   `MAIL_PUBLIC_RATE_LIMIT_PER_MINUTE` per project (default: the secret key's number), so a scraped
 *   public key can never spend the secret key's budget and block `/v1/send`; and within it
 *   `MAIL_PUBLIC_RATE_LIMIT_PER_IP_PER_MINUTE` (default 120) per client address (IPv6 by /64), so one
 *   client cannot use up the project's public budget alone.
 *
 * Its own Redis connection, with auto-pipelining: the calls of requests that arrive together leave in
 * one write instead of one each (every keyed request makes one, so this is the API's hottest command).
 */
@Injectable()
export class ApiRateLimiter implements OnApplicationShutdown {
  private readonly redis: Redis;
  private readonly secret: Bucket;
  private readonly publicPerProject: Bucket;
  private readonly publicPerClient: Bucket;

  constructor(@Inject(REDIS_SETTINGS) settings: RedisSettings, @Inject(MAIL_CONFIG) config: MailConfig) {
    this.redis = createCommandClient(settings.url, { enableAutoPipelining: true });
    this.redis.on('error', () => undefined); // the insurance limiter covers it; readiness reports Redis
    const prefix = `${settings.queuePrefix}:mail:rl`;
    this.secret = new Bucket(this.redis, `${prefix}:api`, config.rateLimitPerMinute, 'requests per minute per project');
    this.publicPerProject = new Bucket(
      this.redis,
      `${prefix}:pk`,
      config.publicRateLimitPerMinute,
      'public-key requests per minute per project',
    );
    this.publicPerClient = new Bucket(
      this.redis,
      `${prefix}:pk-ip`,
      config.publicRateLimitPerIpPerMinute,
      'public-key requests per minute per project from one client address',
    );
  }

  onApplicationShutdown(): void {
    this.redis.disconnect();
  }

  /** One point of the secret key's budget of the project. */
  consume(projectId: string): Promise<RateLimitState> {
    return this.secret.consume(projectId);
  }

  /**
   * One point of the client's public budget, then of the project's; a client over its own limit does
   * not spend the project's. Answers the refusing bucket, or the one closer to its limit.
   */
  async consumePublic(projectId: string, clientIp: string): Promise<RateLimitState> {
    const perClient = await this.publicPerClient.consume(`${projectId}:${clientIpBucket(clientIp)}`);
    if (!perClient.allowed) return perClient;
    const perProject = await this.publicPerProject.consume(projectId);
    if (!perProject.allowed) return perProject;
    return perClient.remaining < perProject.remaining ? perClient : perProject;
  }
}
