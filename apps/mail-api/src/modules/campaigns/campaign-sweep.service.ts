import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { projectScope, type ProjectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryQueue, MailEmailPriority } from '../delivery/email-delivery.queue.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import { batchRange, CampaignsQueue } from './campaigns.queue.js';
import { CampaignsRepository, type ActiveCampaign } from './campaigns.repository.js';

const CAMPAIGN_PAGE = 100;
const EMAIL_PAGE = 1000;

export interface SweepResult {
  campaigns: number;
  dispatches: number;
  batches: number;
  emails: number;
  completed: number;
}

/**
 * Re-derives the campaign pipeline's Redis state from Postgres (every MAIL_CAMPAIGN_SWEEP_SECONDS):
 * after a Redis flush, a lost enqueue or a crash between a commit and an enqueue, every unfinished
 * campaign gets back its jobs: SCHEDULED ones their (delayed or due) dispatch, SENDING ones their
 * dispatch if the snapshot is missing, a job for each batch not planned yet, and a delivery job for
 * each email not finished; a campaign whose emails are all finished is completed. Every add uses the
 * job's own id, so an existing job is never doubled, and Postgres decides what each job still does.
 */
@Injectable()
export class CampaignSweep {
  private readonly logger = new Logger(CampaignSweep.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly recipients: CampaignRecipientsRepository,
    private readonly queue: CampaignsQueue,
    private readonly deliveryQueue: EmailDeliveryQueue,
  ) {}

  async run(): Promise<SweepResult> {
    const result: SweepResult = { campaigns: 0, dispatches: 0, batches: 0, emails: 0, completed: 0 };
    let afterId: string | null = null;
    for (;;) {
      const page = await this.campaigns.active(this.dataSource, { afterId, limit: CAMPAIGN_PAGE });
      for (const campaign of page) await this.sweepOne(campaign, result);
      result.campaigns += page.length;
      if (page.length < CAMPAIGN_PAGE) break;
      afterId = page[page.length - 1].id;
    }
    if (result.batches + result.emails + result.completed > 0)
      this.logger.log(result, 'campaign sweep re-created jobs or completed campaigns');
    return result;
  }

  private async sweepOne(campaign: ActiveCampaign, result: SweepResult): Promise<void> {
    const ref = { id: campaign.id, projectId: campaign.projectId };
    if (campaign.status === 'SCHEDULED' || !campaign.snapshotAt) {
      await this.queue.dispatch({ ...ref, scheduledAt: campaign.status === 'SCHEDULED' ? campaign.scheduledAt : null });
      result.dispatches += 1;
      return;
    }
    const scope = projectScope(campaign.projectId);
    if (campaign.plannedBatches < campaign.batchCount) result.batches += await this.restoreBatches(scope, campaign);
    result.emails += await this.restoreDeliveries(scope, campaign.id);
    if (await this.campaigns.completeIfFinished(this.dataSource, scope, campaign.id)) result.completed += 1;
  }

  /** Batches with neither a job nor a plan get their job again. */
  private async restoreBatches(scope: ProjectScope, campaign: ActiveCampaign): Promise<number> {
    const all = Array.from({ length: campaign.batchCount }, (_, i) => i);
    const existing = await this.queue.existingBatchJobs(campaign.id, all);
    const withoutJob = all.filter((batch) => !existing.has(batch));
    const pendingStarts = await this.recipients.pendingBatchStarts(this.dataSource, scope, {
      campaignId: campaign.id,
      seqs: withoutJob.map((batch) => batchRange(batch).fromSeq),
    });
    const pending = new Set(pendingStarts);
    const missing = withoutJob.filter((batch) => pending.has(batchRange(batch).fromSeq));
    await this.queue.batches({ id: campaign.id, projectId: scope.projectId }, missing);
    return missing.length;
  }

  /** QUEUED emails (and SENDING ones whose worker died) without a delivery job get one again. */
  private async restoreDeliveries(scope: ProjectScope, campaignId: string): Promise<number> {
    let restored = 0;
    let afterId: string | null = null;
    for (;;) {
      const ids = await this.recipients.unfinishedEmailIds(this.dataSource, scope, { campaignId, afterId, limit: EMAIL_PAGE });
      if (ids.length === 0) break;
      const existing = await this.deliveryQueue.existingJobIds(ids);
      const missing = ids.filter((id) => !existing.has(id));
      await this.deliveryQueue.enqueueOrLeaveToSweep(scope, { emailIds: missing, priority: MailEmailPriority.Campaign });
      restored += missing.length;
      if (ids.length < EMAIL_PAGE) break;
      afterId = ids[ids.length - 1];
    }
    return restored;
  }
}
