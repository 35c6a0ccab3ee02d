import { Redis, type RedisOptions } from 'ioredis';

export const REDIS = Symbol('REDIS');

export interface RedisSettings {
  url: string;
  /** Key prefix of the BullMQ queues (tests use a unique one each). */
  queuePrefix: string;
}
export const REDIS_SETTINGS = Symbol('REDIS_SETTINGS');

/**
 * A client for request-path commands (caches, rate limits, probes): it fails fast instead of queueing
 * commands while Redis is away, so a request never hangs on a dead Redis.
 */
export function createCommandClient(url: string, extra: RedisOptions = {}): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 2000,
    lazyConnect: false,
    ...extra,
  });
}

/** A client for BullMQ workers, which block on Redis and must retry forever (BullMQ requires null). */
export function createBlockingClient(url: string): Redis {
  return new Redis(url, { maxRetriesPerRequest: null });
}
