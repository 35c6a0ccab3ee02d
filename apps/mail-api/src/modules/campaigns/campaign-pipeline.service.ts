import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryRepository } from '../delivery/email-delivery.repository.js';
import type { EmailToInsert } from '../delivery/email-rows.js';
import { SegmentsService } from '../segments/segments.service.js';
import { UnsubscribeLinks } from '../unsubscribe/unsubscribe-links.js';
import { campaignVariables, renderCampaignEmail } from './campaign-rendering.js';
import {
  CampaignRecipientsRepository,
  type Audience,
  type BatchRecipient,
  type RecipientOutcome,
} from './campaign-recipients.repository.js';
import { batchCountOf, batchRange, CAMPAIGN_BATCH_SIZE, CampaignsQueue } from './campaigns.queue.js';
import { CampaignsRepository, type CampaignRow } from './campaigns.repository.js';

export type DispatchOutcome =
  { outcome: 'started'; batchCount: number } | { outcome: 'not-due'; dueAt: Date } | { outcome: 'skipped'; reason: string };

export type BatchOutcome =
  { outcome: 'planned'; emails: number; skipped: number } | { outcome: 'wait'; ms: number } | { outcome: 'skipped'; reason: string };

/** A batch that waits for the backlog to drain looks again after at most this long. */
const MAX_WAIT_MS = 5 * 60_000;
const MIN_WAIT_MS = 250;

/**
 * How many of one campaign's emails may be QUEUED or SENDING at once: a minute of sending at the
 * configured rate, at least 2,000, at most 50,000. A batch runs only when its emails fit, so a campaign
 * of a million contacts keeps a bounded backlog in Redis (and its emails rendered shortly before they
 * go out) instead of a million jobs, while the email queue never runs dry.
 */
export function backlogWindow(ratePerSecond: number): number {
  return Math.min(50_000, Math.max(2_000, ratePerSecond * 60));
}

/**
 * The staged send of a campaign. Postgres decides what each step still has to do, so every job is
 * idempotent and a lost one can be re-created from the rows (CampaignSweep):
 *
 * 1. dispatch: SCHEDULED -> SENDING once due; the audience snapshot (one INSERT ... SELECT into
 *    campaign_recipients, in the transaction that records it); one job per batch of 500 recipients.
 * 2. batch k: renders recipients (k*500, (k+1)*500] for their contacts as they are now (deleted or
 *    unsubscribed ones are skipped), then in one transaction holding the campaign's row lock (so a
 *    cancel waits for it, or it sees the cancel) inserts their emails (unique per (campaign, contact))
 *    and marks the recipients; after commit, MarketingFeeder moves them onto the throttled email queue,
 *    a little at a time and round-robin with other projects' marketing mail.
 * 3. delivery (EmailDeliveryJobs): each email once; the last one to finish completes the campaign.
 */
@Injectable()
export class CampaignPipeline {
  private readonly logger = new Logger(CampaignPipeline.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly recipients: CampaignRecipientsRepository,
    private readonly segments: SegmentsService,
    private readonly emails: EmailDeliveryRepository,
    private readonly queue: CampaignsQueue,
    private readonly unsubscribeLinks: UnsubscribeLinks,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async dispatch(scope: ProjectScope, campaignId: string): Promise<DispatchOutcome> {
    const result = await this.dataSource.transaction(async (tx): Promise<DispatchOutcome> => {
      let row = await this.campaigns.findById(tx, scope, { id: campaignId, lock: true });
      if (!row) return { outcome: 'skipped', reason: 'no such campaign' };
      if (row.status === 'SCHEDULED') {
        const started = await this.campaigns.startSending(tx, scope, { id: campaignId, dueOnly: true });
        if (!started) return { outcome: 'not-due', dueAt: row.scheduled_at ?? new Date() };
        row = started;
      }
      if (row.status !== 'SENDING') return { outcome: 'skipped', reason: `campaign is ${row.status}` };
      if (row.snapshot_at) return { outcome: 'started', batchCount: row.batch_count };
      const audience = await this.audienceOf(tx, scope, row);
      const total = audience ? await this.recipients.snapshot(tx, scope, { campaignId, audience }) : 0;
      await this.campaigns.saveSnapshot(tx, scope, { id: campaignId, totalRecipients: total, batchCount: batchCountOf(total) });
      return { outcome: 'started', batchCount: batchCountOf(total) };
    });
    if (result.outcome !== 'started') return result;
    await this.queue.batches(
      { id: campaignId, projectId: scope.projectId },
      Array.from({ length: result.batchCount }, (_, i) => i),
    );
    // An empty audience has no email whose delivery would complete the campaign.
    if (result.batchCount === 0) await this.campaigns.completeIfFinished(this.dataSource, scope, campaignId);
    return result;
  }

  async planBatch(scope: ProjectScope, campaignId: string, batch: number): Promise<BatchOutcome> {
    const campaign = await this.campaigns.findById(this.dataSource, scope, { id: campaignId });
    if (!campaign || campaign.status !== 'SENDING')
      return { outcome: 'skipped', reason: campaign ? `campaign is ${campaign.status}` : 'no such campaign' };
    if (batch >= campaign.batch_count) return { outcome: 'skipped', reason: 'no such batch' };
    const range = batchRange(batch);
    if (await this.recipients.isPlanned(this.dataSource, scope, { campaignId, fromSeq: range.fromSeq })) {
      // Planned before (a retry after the commit, or a duplicate): its emails wait for the feeder.
      return { outcome: 'skipped', reason: 'batch planned already' };
    }
    // A first look without the lock spares rendering a batch that must wait anyway.
    const early = await this.pacing(this.dataSource, scope, campaign, batch);
    if (early > 0) return { outcome: 'wait', ms: early };
    const pending = await this.recipients.pending(this.dataSource, scope, { campaignId, ...range });
    const { emails, outcomes } = this.render(scope, campaign, pending);
    type Planned = { kind: 'wait'; ms: number } | { kind: 'planned'; rows: { id: string; contactId: string }[] } | null;
    const result = await this.dataSource.transaction(async (tx): Promise<Planned> => {
      const locked = await this.campaigns.findById(tx, scope, { id: campaignId, lock: true });
      if (locked?.status !== 'SENDING') return null;
      // Under the lock, batches of one campaign plan one after another: each sees the others' emails.
      const wait = await this.pacing(tx, scope, locked, batch);
      if (wait > 0) return { kind: 'wait', ms: wait };
      const rows = await this.emails.insertCampaignEmails(tx, scope, {
        campaignId,
        from: { email: campaign.from_email, name: campaign.from_name },
        replyTo: campaign.reply_to,
        emails,
      });
      const byContact = new Map(rows.map((r) => [r.contactId, r.id]));
      for (const email of emails) {
        const emailId = byContact.get(email.contactId);
        const { seq } = email;
        outcomes.push(emailId ? { seq, emailId } : { seq, skipReason: 'the contact has an email of this campaign already' });
      }
      if ((await this.recipients.record(tx, scope, { campaignId, outcomes })) > 0)
        await this.campaigns.countPlannedBatch(tx, scope, campaignId);
      return { kind: 'planned', rows };
    });
    if (!result) return { outcome: 'skipped', reason: 'campaign no longer SENDING' };
    if (result.kind === 'wait') return { outcome: 'wait', ms: result.ms };
    const inserted = result.rows;
    // No enqueue: the emails wait in Postgres for MarketingFeeder, which feeds them to the email queue
    // round-robin with other projects' marketing mail.
    // A batch whose recipients were all skipped sends nothing that would complete the campaign.
    await this.campaigns.completeIfFinished(this.dataSource, scope, campaignId);
    return { outcome: 'planned', emails: inserted.length, skipped: outcomes.length - inserted.length };
  }

  /**
   * 0 when the batch may run now; else how long to wait: until the campaign's backlog has room for it,
   * at the sending rate, counting the batches before it (so far batches do not all look again at once).
   */
  private async pacing(db: DataSource | EntityManager, scope: ProjectScope, campaign: CampaignRow, batch: number): Promise<number> {
    const window = backlogWindow(this.config.ratePerSecond);
    const backlog = await this.recipients.backlog(db, scope, { campaignId: campaign.id, cap: window });
    if (backlog + CAMPAIGN_BATCH_SIZE <= window) return 0;
    const ahead = Math.max(0, batch - campaign.planned_batches) * CAMPAIGN_BATCH_SIZE;
    const excess = backlog + CAMPAIGN_BATCH_SIZE - window + ahead;
    return Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, Math.ceil((excess / this.config.ratePerSecond) * 1000)));
  }

  /** Each pending recipient's email, or the reason it gets none (its outcome). Only this batch is held in memory. */
  private render(scope: ProjectScope, campaign: CampaignRow, pending: BatchRecipient[]) {
    const emails: (EmailToInsert & { seq: number })[] = [];
    const outcomes: RecipientOutcome[] = [];
    for (const r of pending) {
      if (r.email === null) outcomes.push({ seq: r.seq, skipReason: 'contact deleted' });
      else if (!r.subscribed) outcomes.push({ seq: r.seq, skipReason: 'contact unsubscribed' });
      else {
        const variables = campaignVariables({ email: r.email, data: r.data }, this.unsubscribeLinks.urlFor(scope.projectId, r.contactId));
        const rendered = renderCampaignEmail(campaign, variables);
        if ('problem' in rendered) outcomes.push({ seq: r.seq, skipReason: rendered.problem });
        else emails.push({ seq: r.seq, contactId: r.contactId, to: { email: r.email, name: null }, ...rendered });
      }
    }
    return { emails, outcomes };
  }

  /** The stored audience; null when its segment is gone (an empty audience: nothing is sent). */
  private async audienceOf(tx: EntityManager, scope: ProjectScope, row: CampaignRow): Promise<Audience | null> {
    if (row.audience_type === 'ALL') return { kind: 'ALL' };
    if (row.audience_type === 'FILTERED') return row.audience_filter ? { kind: 'FILTERED', condition: row.audience_filter } : null;
    // Share-locked until the snapshot commits: the segment cannot be deleted or changed under it.
    const segment = row.segment_id ? await this.segments.lockForCampaign(tx, scope, row.segment_id) : null;
    if (!segment) this.logger.warn({ campaignId: row.id, segmentId: row.segment_id }, 'the segment of a campaign is gone: nothing to send');
    return segment ? { kind: 'SEGMENT', segment } : null;
  }
}
