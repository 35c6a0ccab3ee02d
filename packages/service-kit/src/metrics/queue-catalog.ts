import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '../queue/redis.js';
import { METRICS_OPTIONS, type MetricsOptions } from './metrics-registry.js';

/** How long a discovered list of queues is reused before Redis is scanned again. */
const REFRESH_MS = 30_000;
const SCAN_COUNT = 1000;
/** BullMQ queue names never contain ':' (BullMQ refuses them), so the key splits unambiguously. */
const QUEUE_NAME = /^[^:]+$/;

/**
 * The app's queues, as Redis knows them: every BullMQ queue writes `<prefix>:<name>:meta` when a
 * producer or scheduler opens it, so a SCAN finds the queues of every module, including ones added
 * after this code was written and ones only the worker opens. Filtered by the app's queue name
 * prefix, since both apps may share one Redis and one key prefix. Cached for 30 s.
 */
@Injectable()
export class QueueCatalog {
  private cached: { names: string[]; at: number } | null = null;
  private scanning: Promise<string[]> | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
    @Inject(METRICS_OPTIONS) private readonly options: MetricsOptions,
  ) {}

  async names(): Promise<string[]> {
    if (this.cached && Date.now() - this.cached.at < REFRESH_MS) return this.cached.names;
    this.scanning ??= this.scan().finally(() => (this.scanning = null));
    const names = await this.scanning;
    this.cached = { names, at: Date.now() };
    return names;
  }

  private async scan(): Promise<string[]> {
    const head = `${this.settings.queuePrefix}:`;
    const match = `${escapeGlob(head + (this.options.queueNamePrefix ?? ''))}*:meta`;
    const found = new Set<string>();
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', match, 'COUNT', SCAN_COUNT);
      cursor = next;
      for (const key of keys) {
        const name = key.slice(head.length, -':meta'.length);
        if (QUEUE_NAME.test(name)) found.add(name);
      }
    } while (cursor !== '0');
    return [...found].sort();
  }
}

/** Redis MATCH patterns treat `*?[]\` specially; a prefix is matched literally. */
function escapeGlob(text: string): string {
  return text.replace(/[*?[\]\\]/g, (c) => `\\${c}`);
}
