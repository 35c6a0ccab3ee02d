import { Inject, Injectable, Logger } from '@nestjs/common';
import { isUUID } from 'class-validator';
import { DataSource, type EntityManager } from 'typeorm';
import { ErrorCode, type FieldError, type MailList } from '@app/contracts';
import { DomainError } from '@app/service-kit';
import { MAIL_CONFIG, type MailConfig } from '../../config/mail-config.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf, type ProjectScope } from '../../core/scope/project-scope.js';
import { EmailDeliveryQueue } from '../delivery/email-delivery.queue.js';
import { EmailDeliveryRepository } from '../delivery/email-delivery.repository.js';
import { unverifiedSendersAllowed } from '../delivery/unsigned-delivery.js';
import { DomainsService } from '../domains/domains.service.js';
import { validateCondition, type SegmentCondition } from '../segments/segment-condition.js';
import { SegmentsService } from '../segments/segments.service.js';
import { SendService } from '../send/send.service.js';
import { campaignVariables, renderCampaignEmail } from './campaign-rendering.js';
import type { MailCampaignLink } from './campaign-links.dto.js';
import { CampaignLinksRepository } from './campaign-links.repository.js';
import { CampaignRecipientsRepository } from './campaign-recipients.repository.js';
import type {
  CreateCampaignBody,
  ListCampaignsQuery,
  MailCampaign,
  MailCampaignStats,
  MailCampaignTestResult,
  SendCampaignBody,
  UpdateCampaignBody,
} from './campaigns.dto.js';
import { CampaignsQueue } from './campaigns.queue.js';
import { CampaignsRepository, type CampaignFields, type CampaignRow, type CampaignStatus } from './campaigns.repository.js';

export const INVALID_CAMPAIGN_STATE = 'INVALID_CAMPAIGN_STATE';

/** The audience part of a campaign, as stored. */
type AudienceFields = Pick<CampaignFields, 'audienceType' | 'segmentId' | 'audienceFilter'>;

/**
 * Campaigns of the calling project: CRUD, the status machine of decisions.md (DRAFT -> SCHEDULED ->
 * SENDING -> SENT; SCHEDULED or SENDING -> CANCELLED; illegal moves 400 `INVALID_CAMPAIGN_STATE`), test
 * sends and stats. Sending itself is the pipeline's (campaign-pipeline.service.ts): this service moves
 * the status and enqueues the dispatch job; Postgres stays the truth if Redis loses it (the sweep).
 */
@Injectable()
export class CampaignsService {
  private readonly logger = new Logger(CampaignsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly campaigns: CampaignsRepository,
    private readonly recipients: CampaignRecipientsRepository,
    private readonly campaignLinks: CampaignLinksRepository,
    private readonly segments: SegmentsService,
    private readonly emails: EmailDeliveryRepository,
    private readonly domains: DomainsService,
    private readonly queue: CampaignsQueue,
    private readonly deliveryQueue: EmailDeliveryQueue,
    private readonly sends: SendService,
    @Inject(MAIL_CONFIG) private readonly config: MailConfig,
  ) {}

  async list(project: ProjectContext, query: ListCampaignsQuery): Promise<MailList<MailCampaign>> {
    const { rows, total } = await this.campaigns.list(this.dataSource, scopeOf(project), {
      limit: query.limit,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      status: query.status,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    return { items: page.map(toCampaign), nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }

  async get(project: ProjectContext, id: string): Promise<MailCampaign> {
    return toCampaign(await this.row(this.dataSource, scopeOf(project), id));
  }

  async create(project: ProjectContext, body: CreateCampaignBody): Promise<MailCampaign> {
    const scope = scopeOf(project);
    const audience = await this.checkAudience(this.dataSource, scope, {
      audienceType: body.audienceType,
      segmentId: body.segmentId ?? null,
      audienceFilter: (body.audienceFilter as SegmentCondition | null | undefined) ?? null,
    });
    await this.checkSender(project, body.from);
    const row = await this.campaigns.insert(this.dataSource, scope, {
      name: body.name,
      description: body.description ?? null,
      subject: body.subject,
      body: body.body,
      from: body.from,
      fromName: body.fromName ?? null,
      replyTo: body.replyTo ?? null,
      ...audience,
    });
    return toCampaign(row);
  }

  /** DRAFT or SCHEDULED only. Fields present in the body are set; `null` clears an optional one. */
  async update(project: ProjectContext, id: string, body: UpdateCampaignBody): Promise<MailCampaign> {
    const scope = scopeOf(project);
    const current = await this.row(this.dataSource, scope, id);
    assertState(current, ['DRAFT', 'SCHEDULED'], 'update');
    const patch: Partial<CampaignFields> = {};
    for (const field of ['name', 'description', 'subject', 'body', 'from', 'fromName', 'replyTo'] as const) {
      if (body[field] !== undefined) (patch as Record<string, unknown>)[field] = body[field];
    }
    if (body.audienceType !== undefined || body.segmentId !== undefined || body.audienceFilter !== undefined) {
      Object.assign(patch, await this.checkAudience(this.dataSource, scope, mergeAudience(current, body)));
    }
    if (patch.from !== undefined) await this.checkSender(project, patch.from);
    if (Object.keys(patch).length === 0) return toCampaign(current);
    const row = await this.campaigns.update(this.dataSource, scope, { id: current.id, patch });
    if (!row) throw invalidState(await this.row(this.dataSource, scope, id), 'update');
    return toCampaign(row);
  }

  /** Only a DRAFT (decisions.md): a campaign that was sent or scheduled keeps its history. */
  async remove(project: ProjectContext, id: string): Promise<{ id: string }> {
    const scope = scopeOf(project);
    const current = await this.row(this.dataSource, scope, id);
    assertState(current, ['DRAFT'], 'delete');
    if (!(await this.campaigns.deleteDraft(this.dataSource, scope, current.id)))
      throw invalidState(await this.row(this.dataSource, scope, id), 'delete');
    return { id: current.id };
  }

  /**
   * From DRAFT or SCHEDULED: a future `scheduledFor` schedules (or reschedules), anything else sends
   * now. The sender domain and the audience are checked again (they may have changed since saved). The
   * move commits before the dispatch job is enqueued; if that enqueue is lost, the sweep re-creates it.
   */
  async send(project: ProjectContext, id: string, body: SendCampaignBody): Promise<MailCampaign> {
    const scope = scopeOf(project);
    const current = await this.row(this.dataSource, scope, id);
    assertState(current, ['DRAFT', 'SCHEDULED'], 'send');
    await this.checkSender(project, current.from_email);
    const scheduledAt = body.scheduledFor ? new Date(body.scheduledFor) : null;
    const later = scheduledAt !== null && scheduledAt.getTime() > Date.now();
    const row = await this.dataSource.transaction(async (tx) => {
      await this.checkAudience(tx, scope, toAudienceFields(current));
      return later
        ? this.campaigns.schedule(tx, scope, { id: current.id, scheduledAt })
        : this.campaigns.startSending(tx, scope, { id: current.id, dueOnly: false });
    });
    if (!row) throw invalidState(await this.row(this.dataSource, scope, id), 'send');
    await this.enqueueDispatch(row);
    return toCampaign(row);
  }

  /**
   * From SCHEDULED or SENDING, in one transaction: the campaign is CANCELLED and its unsent emails too,
   * so nothing more goes out (batches not planned yet find the campaign CANCELLED and do nothing).
   */
  async cancel(project: ProjectContext, id: string): Promise<MailCampaign> {
    const scope = scopeOf(project);
    const current = await this.row(this.dataSource, scope, id);
    assertState(current, ['SCHEDULED', 'SENDING'], 'cancel');
    const { row, emailIds } = await this.dataSource.transaction(async (tx) => {
      const cancelled = await this.campaigns.cancel(tx, scope, current.id);
      return { row: cancelled, emailIds: cancelled ? await this.emails.cancelCampaignEmails(tx, scope, current.id) : [] };
    });
    if (!row) throw invalidState(await this.row(this.dataSource, scope, id), 'cancel');
    // Their jobs would only take sending slots to find the rows CANCELLED: dropped in the background.
    this.deliveryQueue
      .remove(emailIds)
      .catch((err: Error) => this.logger.warn({ err: err.message, campaignId: row.id }, 'removing the jobs of cancelled emails failed'));
    return toCampaign(row);
  }

  /**
   * One email now, to `email`, subject prefixed `[TEST] `, rendered with that address and empty data;
   * no contact is created and the campaign is unchanged. It goes as transactional mail (first in the
   * queue, no tracking), and `{{unsubscribeUrl}}` renders as `#`: the address is no contact.
   */
  async test(project: ProjectContext, id: string, email: string): Promise<MailCampaignTestResult> {
    const scope = scopeOf(project);
    const campaign = await this.row(this.dataSource, scope, id);
    await this.checkSender(project, campaign.from_email);
    const rendered = renderCampaignEmail(campaign, campaignVariables({ email, data: {} }, '#'));
    if ('problem' in rendered) throw validationError([{ field: 'body', code: 'maxRenderedSize', message: rendered.problem }]);
    const emailId = await this.sends.sendToAddress(scope, {
      from: { email: campaign.from_email, name: campaign.from_name },
      replyTo: campaign.reply_to,
      to: { email, name: null },
      subject: `[TEST] ${rendered.subject}`.slice(0, 998),
      html: rendered.html,
    });
    return { email: emailId, to: email, timestamp: new Date().toISOString() };
  }

  async stats(project: ProjectContext, id: string): Promise<MailCampaignStats> {
    const scope = scopeOf(project);
    const campaign = await this.row(this.dataSource, scope, id);
    const counts = await this.recipients.emailCounts(this.dataSource, scope, campaign.id);
    const sent = counts.delivered + counts.bounced;
    return {
      totalRecipients: campaign.total_recipients,
      sentCount: sent,
      deliveredCount: counts.delivered,
      openedCount: counts.opened,
      clickedCount: counts.clicked,
      machineOpenedCount: counts.machineOpened,
      machineClickedCount: counts.machineClicked,
      bouncedCount: counts.bounced,
      suppressedCount: counts.suppressed,
      complainedCount: counts.complained,
      openRate: ratio(counts.opened, counts.delivered),
      clickRate: ratio(counts.clicked, counts.delivered),
      bounceRate: ratio(counts.bounced, sent),
      complaintRate: ratio(counts.complained, counts.delivered),
    };
  }

  /** Every clicked link of the campaign (`GET /campaigns/{id}/links`), most clicked first. */
  async links(project: ProjectContext, id: string): Promise<{ items: MailCampaignLink[] }> {
    const scope = scopeOf(project);
    const campaign = await this.row(this.dataSource, scope, id);
    return { items: await this.campaignLinks.links(this.dataSource, scope, campaign.id) };
  }

  private async enqueueDispatch(row: CampaignRow): Promise<void> {
    try {
      await this.queue.dispatch({
        id: row.id,
        projectId: row.project_id,
        scheduledAt: row.status === 'SCHEDULED' ? row.scheduled_at : null,
      });
    } catch (err) {
      this.logger.warn(
        { err: (err as Error).message, campaignId: row.id },
        'enqueue of a campaign dispatch failed; the sweep re-creates it',
      );
    }
  }

  /** 403 DOMAIN_NOT_VERIFIED unless the from address is on a VERIFIED domain (the development outbox takes any, as /v1/send). */
  private async checkSender(project: ProjectContext, from: string): Promise<void> {
    if (!unverifiedSendersAllowed(this.config)) await this.domains.senderDomain(project, from);
  }

  /** The audience fields as stored, or a 422: SEGMENT needs a segment of the project, FILTERED a valid condition. */
  private async checkAudience(db: DataSource | EntityManager, scope: ProjectScope, audience: AudienceFields): Promise<AudienceFields> {
    const problems: FieldError[] = [];
    const { audienceType, segmentId, audienceFilter } = audience;
    if (audienceType === 'SEGMENT' && !segmentId)
      problems.push(field('segmentId', 'isDefined', 'segmentId is required when audienceType is SEGMENT'));
    if (audienceType !== 'SEGMENT' && segmentId)
      problems.push(field('segmentId', 'isEmpty', 'segmentId is only allowed when audienceType is SEGMENT'));
    if (audienceType === 'FILTERED' && !audienceFilter) {
      problems.push(field('audienceFilter', 'isDefined', 'audienceFilter is required when audienceType is FILTERED'));
    }
    if (audienceType !== 'FILTERED' && audienceFilter) {
      problems.push(field('audienceFilter', 'isEmpty', 'audienceFilter is only allowed when audienceType is FILTERED'));
    }
    if (audienceType === 'FILTERED' && audienceFilter) problems.push(...validateCondition(audienceFilter, 'audienceFilter'));
    if (problems.length === 0 && audienceType === 'SEGMENT' && segmentId) {
      // In a transaction (send), the segment's row stays share-locked until it commits: a racing
      // DELETE /segments/{id} waits, then finds this campaign SCHEDULED or SENDING (409 SEGMENT_IN_USE).
      const segment = await this.segments.lockForCampaign(db instanceof DataSource ? db.manager : db, scope, segmentId);
      if (!segment) problems.push(field('segmentId', 'segmentExists', 'segmentId is not a segment of this project'));
    }
    if (problems.length > 0) throw validationError(problems);
    return { audienceType, segmentId: segmentId ?? null, audienceFilter: audienceFilter ?? null };
  }

  private async row(db: DataSource, scope: ProjectScope, id: string): Promise<CampaignRow> {
    const row = isUUID(id) ? await this.campaigns.findById(db, scope, { id }) : null;
    if (!row) throw DomainError.notFound('campaign not found');
    return row;
  }
}

/** The audience after a PATCH: a changed audienceType drops the other kind's field unless the body sets it. */
function mergeAudience(current: CampaignRow, body: UpdateCampaignBody): AudienceFields {
  const audienceType = body.audienceType ?? current.audience_type;
  const typeChanged = audienceType !== current.audience_type;
  const keep = <T>(given: T | null | undefined, stored: T | null): T | null => (given !== undefined ? given : typeChanged ? null : stored);
  return {
    audienceType,
    segmentId: keep(body.segmentId, current.segment_id),
    audienceFilter: keep(body.audienceFilter as SegmentCondition | null | undefined, current.audience_filter),
  };
}

function toAudienceFields(row: CampaignRow): AudienceFields {
  return { audienceType: row.audience_type, segmentId: row.segment_id, audienceFilter: row.audience_filter };
}

function ratio(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 10_000;
}

function field(name: string, code: string, message: string): FieldError {
  return { field: name, code, message };
}

function validationError(problems: FieldError[]): DomainError {
  return new DomainError(ErrorCode.ValidationError, `validation failed: ${problems.map((p) => p.message).join('; ')}`, {
    status: 422,
    details: problems,
  });
}

const ALLOWED: Record<string, string> = {
  update: 'DRAFT or SCHEDULED',
  delete: 'DRAFT',
  send: 'DRAFT or SCHEDULED',
  cancel: 'SCHEDULED or SENDING',
};

function invalidState(row: CampaignRow, action: string): DomainError {
  return new DomainError(INVALID_CAMPAIGN_STATE, `cannot ${action} a ${row.status} campaign (only ${ALLOWED[action]})`, {
    status: 400,
    suggestion: `Campaign status moves: DRAFT -> SCHEDULED -> SENDING -> SENT; SCHEDULED or SENDING -> CANCELLED.`,
  });
}

function assertState(row: CampaignRow, allowed: CampaignStatus[], action: string): void {
  if (!allowed.includes(row.status)) throw invalidState(row, action);
}

export function toCampaign(row: CampaignRow): MailCampaign {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    subject: row.subject,
    body: row.body,
    from: row.from_email,
    fromName: row.from_name,
    replyTo: row.reply_to,
    type: row.audience_type,
    audienceType: row.audience_type,
    segmentId: row.segment_id,
    audienceFilter: row.audience_filter,
    status: row.status,
    scheduledAt: row.scheduled_at?.toISOString() ?? null,
    sentAt: row.sent_at?.toISOString() ?? null,
    totalRecipients: row.total_recipients,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
