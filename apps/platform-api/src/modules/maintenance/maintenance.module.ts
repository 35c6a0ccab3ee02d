import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { NotificationsModule } from '../notifications/notifications.module.js';
import { HousekeepingJobs } from './housekeeping.jobs.js';
import { MaintenanceJobs } from './maintenance.jobs.js';
import { RecurringJobs } from './recurring-jobs.js';

/**
 * The worker's maintenance queue: heartbeats and the hourly purge of expired rows, each table's through
 * the repository that owns it (the auth and notifications modules export them).
 */
@Module({
  imports: [AuthModule, NotificationsModule],
  providers: [MaintenanceJobs, HousekeepingJobs, RecurringJobs],
  exports: [RecurringJobs],
})
export class MaintenanceModule {}
