import { Inject, Injectable } from '@nestjs/common';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import { hashKey, keyKindOf } from '../../modules/projects/project-keys.js';
import { ProjectsService, type ProjectKeyMatch } from '../../modules/projects/projects.service.js';

const MAX_ENTRIES = 10_000;

interface Entry {
  match: ProjectKeyMatch;
  expiresAt: number;
}

/**
 * Key hash → project, kept in process for `MAIL_KEY_CACHE_TTL_SECONDS` (default 30 s) so an API request
 * does not query Postgres for its key. The price: a project disabled, or a key rotated, keeps working on
 * an instance for at most that long. Only hits are cached (an unknown key is looked up every time, so a
 * project created a moment ago works at once); concurrent misses for one key share one query.
 */
@Injectable()
export class ProjectKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly pending = new Map<string, Promise<ProjectKeyMatch | null>>();
  private readonly ttlMs: number;

  constructor(
    private readonly projects: ProjectsService,
    @Inject(MAIL_CONFIG) config: MailConfig,
  ) {
    this.ttlMs = config.keyCacheTtlSeconds * 1000;
  }

  async find(rawKey: string): Promise<ProjectKeyMatch | null> {
    if (!keyKindOf(rawKey)) return null;
    if (this.ttlMs === 0) return this.projects.findByKey(rawKey);
    const hash = hashKey(rawKey);
    const entry = this.entries.get(hash);
    if (entry && entry.expiresAt > Date.now()) return entry.match;
    let lookup = this.pending.get(hash);
    if (!lookup) {
      lookup = this.lookup(hash, rawKey);
      this.pending.set(hash, lookup);
    }
    return lookup;
  }

  private async lookup(hash: string, rawKey: string): Promise<ProjectKeyMatch | null> {
    try {
      const match = await this.projects.findByKey(rawKey);
      this.entries.delete(hash);
      if (match) {
        if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
        this.entries.set(hash, { match, expiresAt: Date.now() + this.ttlMs });
      }
      return match;
    } finally {
      this.pending.delete(hash);
    }
  }
}
