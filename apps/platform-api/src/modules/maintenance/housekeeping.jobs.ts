import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PlatformMaintenanceJob, PlatformQueue } from '@app/contracts';
import { OnJob } from '@app/service-kit';

const BATCH = 1000;
/** A run deletes at most this many batches per table; the next hourly run goes on. */
const ROUNDS = 50;

/**
 * What may go once it has expired, with a grace period: an expired session or one-time token is
 * refused with the same answer whether its row exists or not, so a day later it is only weight;
 * an expired notification is hidden from every list, and kept a month for support questions.
 */
const PURGES: { table: string; olderThan: string }[] = [
  { table: 'sessions', olderThan: '1 day' },
  { table: 'auth_tokens', olderThan: '1 day' },
  { table: 'notifications', olderThan: '30 days' },
];

@Injectable()
export class HousekeepingJobs {
  private readonly logger = new Logger(HousekeepingJobs.name);

  constructor(private readonly dataSource: DataSource) {}

  @OnJob({ queue: PlatformQueue.Maintenance, name: PlatformMaintenanceJob.PurgeExpired })
  async purgeExpired(): Promise<Record<string, number>> {
    const deleted: Record<string, number> = {};
    for (const { table, olderThan } of PURGES) deleted[table] = await this.purge(table, olderThan);
    if (Object.values(deleted).some((n) => n > 0)) this.logger.log({ deleted }, 'purged expired rows');
    return deleted;
  }

  /** Batches through the table's expiry index, so no statement holds many locks or runs long. */
  private async purge(table: string, olderThan: string): Promise<number> {
    let total = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      // TypeORM answers a DELETE with [rows, count].
      const [rows] = (await this.dataSource.query(
        `DELETE FROM ${table} WHERE id IN (
           SELECT id FROM ${table} WHERE expires_at < now() - interval '${olderThan}' ORDER BY expires_at LIMIT ${BATCH})
         RETURNING 1`,
      )) as [unknown[], number];
      total += rows.length;
      if (rows.length < BATCH) break;
    }
    return total;
  }
}
