import type { JobsOptions } from 'bullmq';

/**
 * The platform worker's housekeeping queue: its repeatable jobs (scheduled by RecurringJobs) and the
 * heartbeat of the round-trip check (`MaintenanceJob.WorkerHeartbeat`, shared by both apps, in
 * contracts).
 */
export const MAINTENANCE_QUEUE = 'platform-maintenance';

/** Options of every scheduled maintenance run: a short history of each, for looking back at recent runs. */
export const MAINTENANCE_JOB_OPTIONS: JobsOptions = { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } };

export const PlatformMaintenanceJob = {
  /** Delete sessions, one-time tokens and notifications long past their expiry (repeatable; HousekeepingJobs). */
  PurgeExpired: 'housekeeping.purge-expired',
} as const;
