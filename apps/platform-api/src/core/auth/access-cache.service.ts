import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import type { ResolvedAcl } from './auth-context.js';

type Invalidation = { type: 'acl'; generation: number } | { type: 'session'; sessionIds: string[] } | { type: 'user'; userId: string };

interface CachedSession {
  userId: string;
  expiresAt: number;
  cachedUntil: number;
}

const LOCAL_ACL_TTL_MS = 60_000;
const REDIS_ACL_TTL_S = 300;
// Bounds how long a revoked session can survive on an instance that missed the pub/sub message.
const LOCAL_SESSION_TTL_MS = 30_000;
const MAX_LOCAL_ENTRIES = 50_000;

/**
 * The per-request hot path: resolved ACLs and session liveness, cached in process (and ACLs in Redis),
 * invalidated across instances through Redis pub/sub. ACL entries carry a generation: every ACL,
 * role or membership change bumps it, so stale entries in Redis are never read again.
 */
@Injectable()
export class AccessCacheService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(AccessCacheService.name);
  private readonly acls = new Map<string, { acl: ResolvedAcl; expires: number }>();
  private readonly sessions = new Map<string, CachedSession>();
  private generation = 0;
  private subscriber?: Redis;
  private readonly channel: string;
  private readonly generationKey: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
  ) {
    this.channel = `${settings.queuePrefix}:auth:invalidate`;
    this.generationKey = `${settings.queuePrefix}:auth:acl-generation`;
  }

  async onModuleInit(): Promise<void> {
    this.subscriber = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel, message) => this.apply(JSON.parse(message) as Invalidation));
    // After a reconnect we may have missed messages: drop everything local.
    this.subscriber.on('ready', () => this.clearLocal());
    await this.subscriber.subscribe(this.channel).catch(() => undefined);
    this.generation = Number(await this.redis.get(this.generationKey).catch(() => 0)) || 0;
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }

  async getAcl(userId: string, tenantId: string, load: () => Promise<ResolvedAcl>): Promise<ResolvedAcl> {
    const key = `${tenantId}:${userId}`;
    const local = this.acls.get(key);
    if (local && local.expires > Date.now()) return local.acl;

    const generation = this.generation;
    const redisKey = `${this.settings.queuePrefix}:auth:acl:${generation}:${key}`;
    let acl: ResolvedAcl | null = null;
    const shared = await this.redis.get(redisKey).catch(() => null);
    if (shared) acl = JSON.parse(shared) as ResolvedAcl;
    if (!acl) {
      acl = await load();
      await this.redis.set(redisKey, JSON.stringify(acl), 'EX', REDIS_ACL_TTL_S).catch(() => undefined);
    }
    // An invalidation that arrived while we loaded makes this result suspect: do not keep it.
    if (generation === this.generation) this.remember(this.acls, key, { acl, expires: Date.now() + LOCAL_ACL_TTL_MS });
    return acl;
  }

  async getSession(sessionId: string, load: () => Promise<{ userId: string; expiresAt: Date } | null>) {
    const local = this.sessions.get(sessionId);
    const now = Date.now();
    if (local && local.cachedUntil > now) return local.expiresAt > now ? local : null;
    const row = await load();
    if (!row) {
      this.sessions.delete(sessionId);
      return null;
    }
    const entry = { userId: row.userId, expiresAt: row.expiresAt.getTime(), cachedUntil: now + LOCAL_SESSION_TTL_MS };
    this.remember(this.sessions, sessionId, entry);
    return entry.expiresAt > now ? entry : null;
  }

  /** Call after committing any change to roles, role/user ACLs or memberships. */
  async invalidateAcls(): Promise<void> {
    const generation = await this.redis.incr(this.generationKey).catch(() => this.generation + 1);
    await this.publish({ type: 'acl', generation });
  }

  async invalidateSessions(sessionIds: string[]): Promise<void> {
    if (sessionIds.length) await this.publish({ type: 'session', sessionIds });
  }

  async invalidateUser(userId: string): Promise<void> {
    await this.publish({ type: 'user', userId });
  }

  private async publish(message: Invalidation): Promise<void> {
    this.apply(message); // this instance at once; the others through Redis
    await this.redis.publish(this.channel, JSON.stringify(message)).catch((err: Error) => {
      this.logger.warn({ err: err.message }, 'could not publish auth invalidation; other instances rely on cache TTLs');
    });
  }

  private apply(message: Invalidation): void {
    if (message.type === 'acl') {
      this.generation = Math.max(this.generation + 1, message.generation);
      this.acls.clear();
    } else if (message.type === 'session') {
      for (const id of message.sessionIds) this.sessions.delete(id);
    } else {
      for (const [id, s] of this.sessions) if (s.userId === message.userId) this.sessions.delete(id);
      for (const key of this.acls.keys()) if (key.endsWith(`:${message.userId}`)) this.acls.delete(key);
    }
  }

  private clearLocal(): void {
    this.acls.clear();
    this.sessions.clear();
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_LOCAL_ENTRIES) map.delete(map.keys().next().value as string);
    map.set(key, value);
  }
}
