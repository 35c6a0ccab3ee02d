import { Module } from '@nestjs/common';
import { MaintenanceJobs } from './maintenance.jobs.js';
import { RecurringJobs } from './recurring-jobs.js';

@Module({ providers: [MaintenanceJobs, RecurringJobs], exports: [RecurringJobs] })
export class MaintenanceModule {}
