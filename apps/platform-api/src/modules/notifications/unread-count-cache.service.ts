import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { Redis } from 'ioredis';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';

/** What changed: some users' notifications in a tenant, or (null) any of the tenant's users'. */
interface UnreadChange {
  tenantId: string;
  userIds: string[] | null;
}

interface CachedCount {
  count: number;
  /** Until the first counted notification expires (it then stops counting), or the local TTL. */
  validUntil: number;
}

/** Bounds how long an instance that missed an invalidation message can answer a stale badge. */
const LOCAL_TTL_MS = 30_000;
const MAX_ENTRIES = 50_000;
/** Above this many recipients a change invalidates the whole tenant (one small message per fan-out chunk). */
const MAX_USERS_PER_MESSAGE = 200;

/**
 * The notification badge (GET /notifications/unread-count) is polled by every open page: its count is
 * kept in process, per user, so a poll costs no SQL. Each entry is valid until the first of its
 * notifications expires (expired ones do not count) and at most LOCAL_TTL_MS.
 *
 * Every write that can change a user's unread count (new notifications, read, dismiss, restore,
 * action, mark-all-read) calls `changed` after its commit: this instance drops the entries at once
 * (so the writer's next poll is exact) and the others, and the worker's fan-outs, through one Redis
 * pub/sub channel, like the ACL caches (core/auth/access-cache.service.ts). A count loaded while a
 * change arrived is not kept. After a reconnect to Redis (messages may have been missed) everything
 * is dropped; while the subscription is not up, nothing is cached.
 */
@Injectable()
export class UnreadCountCache implements OnApplicationShutdown {
  private readonly logger = new Logger(UnreadCountCache.name);
  private readonly counts = new Map<string, CachedCount>();
  private readonly channel: string;
  private subscriber?: Redis;
  private subscribed = false;
  /** Counts changes applied, so a load that raced one is not kept. */
  private changes = 0;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {
    this.channel = `${settings.queuePrefix}:notifications:unread-changed`;
  }

  /** The user's unread count: cached, else `load` (the count and the first expiry among the counted). */
  async get(tenantId: string, userId: string, load: () => Promise<{ count: number; nextExpiry: Date | null }>): Promise<number> {
    const key = `${tenantId}:${userId}`;
    const now = Date.now();
    const cached = this.counts.get(key);
    if (cached && cached.validUntil > now) return cached.count;
    this.subscribe();
    const changes = this.changes;
    const { count, nextExpiry } = await load();
    if (this.subscribed && changes === this.changes) {
      if (this.counts.size >= MAX_ENTRIES) this.counts.delete(this.counts.keys().next().value as string);
      this.counts.set(key, { count, validUntil: Math.min(now + LOCAL_TTL_MS, nextExpiry?.getTime() ?? Infinity) });
    }
    return count;
  }

  /** After committing a change to these users' notifications (empty: nothing to say). */
  async changed(tenantId: string, userIds: readonly string[]): Promise<void> {
    if (userIds.length === 0) return;
    const change: UnreadChange = { tenantId, userIds: userIds.length > MAX_USERS_PER_MESSAGE ? null : [...new Set(userIds)] };
    this.apply(change); // this instance at once, the others through Redis
    await this.redis.publish(this.channel, JSON.stringify(change)).catch((err: Error) => {
      this.logger.warn({ err: err.message }, 'could not publish an unread-count change; other instances rely on the cache TTL');
    });
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }

  /** Opened on the first read (the worker, which only writes, never opens it). */
  private subscribe(): void {
    if (this.subscriber) return;
    const subscriber = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.subscriber = subscriber;
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, message: string) => {
      try {
        this.apply(JSON.parse(message) as UnreadChange);
      } catch {
        this.counts.clear();
      }
    });
    // Messages may have been missed while the connection was down: nothing cached survives it, and
    // nothing is cached until the channel is confirmed subscribed on the new connection.
    subscriber.on('close', () => {
      this.subscribed = false;
      this.dropAll();
    });
    subscriber.on('ready', () => {
      subscriber
        .subscribe(this.channel)
        .then(() => {
          this.dropAll();
          this.subscribed = true;
        })
        .catch((err: Error) => this.logger.warn({ err: err.message }, 'unread-count subscription failed; counts are not cached'));
    });
  }

  private apply(change: UnreadChange): void {
    this.changes += 1;
    if (change.userIds === null) {
      for (const key of this.counts.keys()) if (key.startsWith(`${change.tenantId}:`)) this.counts.delete(key);
      return;
    }
    for (const userId of change.userIds) this.counts.delete(`${change.tenantId}:${userId}`);
  }

  private dropAll(): void {
    this.changes += 1;
    this.counts.clear();
  }
}
