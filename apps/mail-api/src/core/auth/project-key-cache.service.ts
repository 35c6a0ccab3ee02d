import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { hashKey, keyKindOf } from './project-keys.js';
import { ProjectKeysRepository, type ProjectKeyMatch } from './project-keys.repository.js';

const MAX_ENTRIES = 10_000;
const MAX_UNKNOWN_ENTRIES = 10_000;

interface Entry<T> {
  value: T;
  expiresAt: number;
}

/** A bounded map of entries that expire; the oldest entry goes first when it is full. */
class ExpiringMap<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
  ) {}

  get(key: string): T | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: T): void {
    if (this.ttlMs === 0) return;
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { value, expiresAt: Date.now() + this.ttlMs });
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}

/**
 * Key hash → project, kept in process for `MAIL_KEY_CACHE_TTL_SECONDS` (default 30 s) so an API request
 * does not query Postgres for its key. The price: a project disabled, or a key rotated, keeps working on
 * an instance for at most that long.
 *
 * A well-formed key of no project is remembered as unknown for `MAIL_KEY_NEGATIVE_CACHE_TTL_SECONDS`
 * (default 5 s), so a client hammering with a wrong or revoked key costs one query per key per TTL, not
 * one per request. Unknown keys have their own bounded map, so a flood of random keys cannot push the
 * real projects' entries out. The price: a key that starts to exist (a bootstrap key, a project created
 * by the CLI) may be refused by an instance that saw it fail for at most that TTL; random keys of new
 * projects and rotations cannot have been seen before. Concurrent misses for one key share one query.
 */
@Injectable()
export class ProjectKeyCache {
  private readonly known: ExpiringMap<ProjectKeyMatch>;
  private readonly unknown: ExpiringMap<true>;
  private readonly pending = new Map<string, Promise<ProjectKeyMatch | null>>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly projectKeys: ProjectKeysRepository,
    @Inject(MAIL_CONFIG) config: MailConfig,
  ) {
    this.known = new ExpiringMap(config.keyCacheTtlSeconds * 1000, MAX_ENTRIES);
    this.unknown = new ExpiringMap(config.keyNegativeCacheTtlSeconds * 1000, MAX_UNKNOWN_ENTRIES);
  }

  /**
   * The key's project and kind, or null; synchronous when the answer is cached (every request but the
   * first per key and TTL), a promise only when Postgres is asked, so a cached key costs its guard no
   * promise and no microtask.
   */
  find(rawKey: string): ProjectKeyMatch | null | Promise<ProjectKeyMatch | null> {
    if (!keyKindOf(rawKey)) return null;
    const hash = hashKey(rawKey);
    const match = this.known.get(hash);
    if (match) return match;
    if (this.unknown.get(hash)) return null;
    let lookup = this.pending.get(hash);
    if (!lookup) {
      lookup = this.lookup(hash, rawKey);
      this.pending.set(hash, lookup);
    }
    return lookup;
  }

  private async lookup(hash: string, rawKey: string): Promise<ProjectKeyMatch | null> {
    try {
      const match = await this.projectKeys.findByKey(this.dataSource, rawKey);
      if (match) {
        this.unknown.delete(hash);
        this.known.set(hash, match);
      } else {
        this.known.delete(hash);
        this.unknown.set(hash, true);
      }
      return match;
    } finally {
      this.pending.delete(hash);
    }
  }
}
