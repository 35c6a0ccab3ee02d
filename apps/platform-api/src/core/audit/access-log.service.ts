import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AuthContext } from '../auth/auth-context.js';
import { AccessLogsRepository, type AccessLogEntryRow } from './access-logs.repository.js';

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
  private buffer: AccessLogEntryRow[] = [];
  private timer?: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private flushScheduled = false;

  constructor(
    private readonly dataSource: DataSource,
    private readonly logs: AccessLogsRepository,
  ) {}

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
        await this.logs.insertBatch(this.dataSource, batch);
      } catch (err) {
        this.requeue(batch, err);
        return;
      }
    }
  }

  /** Postgres is unreachable: keep the entries for the next flush, within a bound. */
  private requeue(batch: AccessLogEntryRow[], err: unknown): void {
    this.buffer = [...batch, ...this.buffer];
    const excess = this.buffer.length - MAX_BUFFERED;
    if (excess > 0) this.buffer.splice(0, excess);
    this.logger.error(
      { err, waiting: this.buffer.length, dropped: Math.max(0, excess) },
      'could not write access log entries; retrying on the next flush',
    );
  }
}
