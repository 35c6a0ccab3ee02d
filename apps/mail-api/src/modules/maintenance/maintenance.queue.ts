import type { JobsOptions } from 'bullmq';

/**
 * The mail worker's housekeeping queue: its repeatable jobs (scheduled by RecurringJobs) and the
 * heartbeat of the round-trip check (`MaintenanceJob.WorkerHeartbeat`, shared by both apps, in
 * contracts). Each job is processed by the module whose tables it works on.
 */
export const MAINTENANCE_QUEUE = 'mail-maintenance';

/** Options of every scheduled maintenance run: a short history of each, for looking back at recent runs. */
export const MAINTENANCE_JOB_OPTIONS: JobsOptions = { removeOnComplete: { count: 10 }, removeOnFail: { count: 50 } };

export const MailMaintenanceJob = {
  /** Recheck the DNS records of pending domains (repeatable; DomainsJobs). */
  RecheckDomains: 'domains.recheck',
  /**
   * Re-enqueue QUEUED emails whose job is missing (Redis lost) and release stale SENDING claims
   * (repeatable; EmailDeliveryJobs).
   */
  RequeueEmails: 'emails.requeue',
  /** Delete Idempotency-Key records older than 24 h (repeatable; SendJobs). */
  PurgeIdempotencyKeys: 'idempotency.purge',
  /** Delete the attachments of send requests whose emails are all finished (repeatable; SendJobs). */
  PurgeSendRequests: 'send-requests.purge',
  /** Re-add missing workflow step jobs and catch up missed starts and resumes (repeatable; WorkflowsJobs). */
  SweepWorkflows: 'workflows.sweep',
  /** Re-add missing campaign dispatch, batch and delivery jobs; complete finished campaigns (repeatable; CampaignsJobs). */
  SweepCampaigns: 'campaigns.sweep',
} as const;
