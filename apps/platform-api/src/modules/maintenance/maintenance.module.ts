import { Module } from '@nestjs/common';
import { HousekeepingJobs } from './housekeeping.jobs.js';
import { MaintenanceJobs } from './maintenance.jobs.js';
import { RecurringJobs } from './recurring-jobs.js';

@Module({ providers: [MaintenanceJobs, HousekeepingJobs, RecurringJobs], exports: [RecurringJobs] })
export class MaintenanceModule {}
