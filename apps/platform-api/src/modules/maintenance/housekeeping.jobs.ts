import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { type Db, OnJob } from '@app/service-kit';
import { AuthTokensRepository } from '../auth/auth-tokens.repository.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { NotificationsRepository } from '../notifications/notifications.repository.js';
import { MAINTENANCE_QUEUE, PlatformMaintenanceJob } from './maintenance.queue.js';

const BATCH = 1000;
/** A run deletes at most this many batches per table; the next hourly run goes on. */
const ROUNDS = 50;

/** Deletes up to `limit` rows of one table expired longer ago than `olderThan`: its owning repository's purge. */
type PurgeBatch = (db: Db, input: { olderThan: string; limit: number }) => Promise<number>;

@Injectable()
export class HousekeepingJobs {
  private readonly logger = new Logger(HousekeepingJobs.name);

  /**
   * What may go once it has expired, with a grace period: an expired session or one-time token is
   * refused with the same answer whether its row exists or not, so a day later it is only weight;
   * an expired notification is hidden from every list, and kept a month for support questions.
   */
  private readonly purges: { table: string; olderThan: string; purgeBatch: PurgeBatch }[];

  constructor(
    private readonly dataSource: DataSource,
    sessions: SessionsRepository,
    tokens: AuthTokensRepository,
    notifications: NotificationsRepository,
  ) {
    this.purges = [
      { table: 'sessions', olderThan: '1 day', purgeBatch: (db, input) => sessions.purgeExpired(db, input) },
      { table: 'auth_tokens', olderThan: '1 day', purgeBatch: (db, input) => tokens.purgeExpired(db, input) },
      { table: 'notifications', olderThan: '30 days', purgeBatch: (db, input) => notifications.purgeExpired(db, input) },
    ];
  }

  @OnJob({ queue: MAINTENANCE_QUEUE, name: PlatformMaintenanceJob.PurgeExpired })
  async purgeExpired(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const { table, olderThan, purgeBatch } of this.purges) deleted[table] = await this.purge(purgeBatch, olderThan);
    if (Object.values(deleted).some((n) => n > 0)) this.logger.log({ deleted }, 'purged expired rows');
    return deleted;
  }

  /** Batches through the table's expiry index, so no statement holds many locks or runs long. */
  private async purge(purgeBatch: PurgeBatch, olderThan: string): Promise<number> {
    let total = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const deleted = await purgeBatch(this.dataSource, { olderThan, limit: BATCH });
      total += deleted;
      if (deleted < BATCH) break;
    }
    return total;
  }
}
