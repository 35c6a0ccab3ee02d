import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS, REDIS_SETTINGS, type RedisSettings } from '@app/service-kit';
import type { ResolvedAcl } from './auth-context.js';
import { SessionLookupRepository } from './session-lookup.repository.js';

/**
 * What ended, as every instance learns it: sessions (logout, password change or reset), everything of
 * a user (deletion, and any user command that may have ended sessions), or of a tenant (deactivation).
 */
export type Revocation =
  { type: 'session'; sessionIds: string[] } | { type: 'user'; userId: string } | { type: 'tenant'; tenantId: string };

/** `profile`: a user's own fields cached with their sessions (the email) changed; nothing ended. */
type Invalidation = { type: 'acl'; generation: number } | { type: 'profile'; userId: string } | Revocation;

/**
 * Told to revocation listeners: a revocation, or `unknown` after a reconnect to Redis, when messages
 * may have been missed and every long-lived holder of a session should check it again.
 */
export type RevocationNotice = Revocation | { type: 'unknown' };

export interface CachedSession {
  userId: string;
  tenantId: string;
  expiresAt: number;
  /** The user's email as the session was loaded (null: user deleted). */
  email: string | null;
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
  private readonly revocationListeners = new Set<(notice: RevocationNotice) => void>();
  /** Counts revocations applied, so a session load that raced one is not cached. */
  private revocations = 0;
  private generation = 0;
  private subscriber?: Redis;
  private readonly channel: string;
  private readonly generationKey: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(REDIS_SETTINGS) private readonly settings: RedisSettings,
    private readonly dataSource: DataSource,
    private readonly sessionLookup: SessionLookupRepository,
  ) {
    this.channel = `${settings.queuePrefix}:auth:invalidate`;
    this.generationKey = `${settings.queuePrefix}:auth:acl-generation`;
  }

  async onModuleInit(): Promise<void> {
    this.subscriber = new Redis(this.settings.url, { maxRetriesPerRequest: null });
    this.subscriber.on('error', () => undefined);
    this.subscriber.on('message', (_channel, message) => this.apply(JSON.parse(message) as Invalidation));
    // After a reconnect we may have missed messages: drop everything local.
    this.subscriber.on('ready', () => {
      this.clearLocal();
      this.notify({ type: 'unknown' });
    });
    await this.subscriber.subscribe(this.channel).catch(() => undefined);
    this.generation = Number(await this.redis.get(this.generationKey).catch(() => 0)) || 0;
  }

  onApplicationShutdown(): void {
    this.subscriber?.disconnect();
  }

  /** The ACL this instance holds for the user in the tenant, if it is still fresh (no Redis, no SQL). */
  cachedAcl(userId: string, tenantId: string): ResolvedAcl | undefined {
    const local = this.acls.get(`${tenantId}:${userId}`);
    return local && local.expires > Date.now() ? local.acl : undefined;
  }

  async getAcl(userId: string, tenantId: string, load: () => Promise<ResolvedAcl>): Promise<ResolvedAcl> {
    const cached = this.cachedAcl(userId, tenantId);
    if (cached) return cached;

    const key = `${tenantId}:${userId}`;
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

  /** The session if it lives (exists, not expired, tenant active); cached, so a warm request does no SQL. */
  liveSession(sessionId: string): Promise<CachedSession | null> {
    return this.getSession(sessionId, () => this.sessionLookup.findLive(this.dataSource, sessionId));
  }

  /**
   * What this instance knows of the session without a query: the live session, null when it ended,
   * undefined when it is not cached (or no longer fresh), and `liveSession` must load it.
   */
  cachedLiveSession(sessionId: string): CachedSession | null | undefined {
    const local = this.sessions.get(sessionId);
    const now = Date.now();
    if (!local || local.cachedUntil <= now) return undefined;
    return local.expiresAt > now ? local : null;
  }

  async getSession(
    sessionId: string,
    load: () => Promise<{ userId: string; tenantId: string; expiresAt: Date; email?: string | null } | null>,
  ): Promise<CachedSession | null> {
    const cached = this.cachedLiveSession(sessionId);
    if (cached !== undefined) return cached;
    const now = Date.now();
    const revocations = this.revocations;
    const row = await load();
    if (!row) {
      this.sessions.delete(sessionId);
      return null;
    }
    const entry: CachedSession = {
      userId: row.userId,
      tenantId: row.tenantId,
      expiresAt: row.expiresAt.getTime(),
      email: row.email ?? null,
      cachedUntil: now + LOCAL_SESSION_TTL_MS,
    };
    // A revocation that arrived while we loaded may concern this row: do not keep it.
    if (revocations === this.revocations) this.remember(this.sessions, sessionId, entry);
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

  /**
   * Call after committing a change of a user's own fields that the session cache carries (the email):
   * every instance reloads that user's sessions, which stay open (no revocation is announced).
   */
  async invalidateProfile(userId: string): Promise<void> {
    await this.publish({ type: 'profile', userId });
  }

  /** Call after a tenant is deactivated: its sessions stop working on every instance. */
  async invalidateTenant(tenantId: string): Promise<void> {
    await this.publish({ type: 'tenant', tenantId });
  }

  /**
   * Long-lived holders of a session (event streams) hear of every revocation, from any instance, after
   * the cache has dropped it. Returns the unsubscribe function.
   */
  onRevocation(listener: (notice: RevocationNotice) => void): () => void {
    this.revocationListeners.add(listener);
    return () => this.revocationListeners.delete(listener);
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
      return;
    }
    // A session load in flight may carry what just changed (or ended): it is not kept (getSession).
    this.revocations += 1;
    if (message.type === 'profile') {
      for (const [id, s] of this.sessions) if (s.userId === message.userId) this.sessions.delete(id);
      return;
    }
    if (message.type === 'session') {
      for (const id of message.sessionIds) this.sessions.delete(id);
    } else if (message.type === 'tenant') {
      for (const [id, s] of this.sessions) if (s.tenantId === message.tenantId) this.sessions.delete(id);
      for (const key of this.acls.keys()) if (key.startsWith(`${message.tenantId}:`)) this.acls.delete(key);
    } else {
      for (const [id, s] of this.sessions) if (s.userId === message.userId) this.sessions.delete(id);
      for (const key of this.acls.keys()) if (key.endsWith(`:${message.userId}`)) this.acls.delete(key);
    }
    this.notify(message);
  }

  private notify(notice: RevocationNotice): void {
    for (const listener of this.revocationListeners) {
      try {
        listener(notice);
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'revocation listener failed');
      }
    }
  }

  private clearLocal(): void {
    this.revocations += 1;
    this.acls.clear();
    this.sessions.clear();
  }

  private remember<V>(map: Map<string, V>, key: string, value: V): void {
    if (map.size >= MAX_LOCAL_ENTRIES) map.delete(map.keys().next().value as string);
    map.set(key, value);
  }
}
