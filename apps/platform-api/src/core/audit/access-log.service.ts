import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AuthContext } from '../auth/auth-context.js';

/** decisions.md "Audit and action logs": one entry per read of users, roles, ACLs, consents, attachments. */
export type AccessType = 'read' | 'read:list' | 'export';

export interface AccessLogInput {
  resourceKind: string;
  resourceId?: string | null;
  accessType: AccessType;
  /** The fields the caller was shown. */
  fields?: string[];
  context?: Record<string, unknown> | null;
}

interface PendingEntry {
  tenant_id: string;
  organization_id: string | null;
  actor_user_id: string;
  resource_kind: string;
  resource_id: string | null;
  access_type: string;
  fields: string[];
  context: Record<string, unknown> | null;
  created_at: string;
}

const FLUSH_INTERVAL_MS = 250;
const FLUSH_AT_ENTRIES = 200;
/** Rows per INSERT statement (one statement, one parameter: a JSON array). */
const MAX_ROWS_PER_STATEMENT = 1000;
/** While Postgres is unreachable entries wait here; beyond this the oldest are dropped (and logged). */
const MAX_BUFFERED = 20_000;

/**
 * Access log writer. Read paths call `record` (synchronous, never throws, never waits for I/O); entries
 * are buffered in memory and written as one multi-row INSERT every 250 ms or as soon as 200 are
 * waiting, and on shutdown. `created_at` is the time of the read, not of the write.
 */
@Injectable()
export class AccessLogService implements OnModuleInit, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(AccessLogService.name);
  private buffer: PendingEntry[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private flushScheduled = false;

  constructor(private readonly dataSource: DataSource) {}

  onModuleInit(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_INTERVAL_MS);
    this.timer.unref();
  }

  record(auth: AuthContext, input: AccessLogInput): void {
    try {
      this.buffer.push({
        tenant_id: auth.tenantId,
        organization_id: auth.organizationId,
        actor_user_id: auth.userId,
        resource_kind: input.resourceKind,
        resource_id: input.resourceId ?? null,
        access_type: input.accessType,
        fields: input.fields ?? [],
        context: input.context ?? null,
        created_at: new Date().toISOString(),
      });
      if (this.buffer.length >= FLUSH_AT_ENTRIES && !this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    } catch (err) {
      this.logger.error({ err }, 'could not buffer an access log entry');
    }
  }

  /** Writes everything buffered so far; resolves once it is committed (tests, shutdown). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeBuffered());
    return this.flushing;
  }

  /** Before the pools close: nothing recorded may be lost on a graceful stop. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  /** Reads that finished while the HTTP server drained. */
  async onApplicationShutdown(): Promise<void> {
    if (this.buffer.length && this.dataSource.isInitialized) await this.flush();
  }

  private async writeBuffered(): Promise<void> {
    this.flushScheduled = false;
    while (this.buffer.length) {
      const batch = this.buffer.splice(0, MAX_ROWS_PER_STATEMENT);
      try {
        await this.insert(batch);
      } catch (err) {
        this.requeue(batch, err);
        return;
      }
    }
  }

  private async insert(batch: PendingEntry[]): Promise<void> {
    // Entries of a tenant deleted in between are skipped rather than failing the whole batch.
    await this.dataSource.query(
      `INSERT INTO access_logs (tenant_id, organization_id, actor_user_id, resource_kind, resource_id, access_type, fields, context, created_at)
       SELECT e.tenant_id, e.organization_id, e.actor_user_id, e.resource_kind, e.resource_id, e.access_type,
              COALESCE(e.fields, '{}'), e.context, e.created_at
         FROM jsonb_to_recordset($1::jsonb) AS e(tenant_id uuid, organization_id uuid, actor_user_id uuid, resource_kind text,
              resource_id text, access_type text, fields text[], context jsonb, created_at timestamptz)
        WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = e.tenant_id)`,
      [JSON.stringify(batch)],
    );
  }

  /** Postgres is unreachable: keep the entries for the next flush, within a bound. */
  private requeue(batch: PendingEntry[], err: unknown): void {
    this.buffer = [...batch, ...this.buffer];
    const excess = this.buffer.length - MAX_BUFFERED;
    if (excess > 0) this.buffer.splice(0, excess);
    this.logger.error(
      { err, waiting: this.buffer.length, dropped: Math.max(0, excess) },
      'could not write access log entries; retrying on the next flush',
    );
  }
}
