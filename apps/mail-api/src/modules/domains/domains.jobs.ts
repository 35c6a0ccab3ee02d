import { Injectable } from '@nestjs/common';
import type { Job } from 'bullmq';
import { OnJob } from '@app/service-kit';
import { MAINTENANCE_QUEUE, MailMaintenanceJob } from '../maintenance/maintenance.queue.js';
import { DomainsService } from './domains.service.js';

/** Domains per run: the oldest-checked first, so every pending domain gets its turn across runs. */
export const RECHECK_BATCH_SIZE = 100;
/** DNS checks at once: each may wait a resolver timeout, and the resolvers are shared with /v1/verify. */
export const RECHECK_CONCURRENCY = 5;

@Injectable()
export class DomainsJobs {
  constructor(private readonly domains: DomainsService) {}

  /**
   * Rechecks non-VERIFIED domains, so a domain whose records appear later becomes VERIFIED without the
   * user clicking verify. Idempotent: each check stores what DNS says at that moment; a duplicate or
   * retried run only checks again. Verified domains are rechecked when the user asks (POST verify).
   */
  @OnJob({ queue: MAINTENANCE_QUEUE, name: MailMaintenanceJob.RecheckDomains })
  recheckDomains(_job: Pick<Job, 'data'>): Promise<{ checked: number; verified: number }> {
    return this.domains.recheckPending(RECHECK_BATCH_SIZE, RECHECK_CONCURRENCY);
  }
}
