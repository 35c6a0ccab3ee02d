import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { SegmentCondition } from '../segments/segment-condition.js';

export type CampaignStatus = 'DRAFT' | 'SCHEDULED' | 'SENDING' | 'SENT' | 'CANCELLED';
export type AudienceType = 'ALL' | 'SEGMENT' | 'FILTERED';

export const CAMPAIGN_STATUSES: CampaignStatus[] = ['DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED'];
export const AUDIENCE_TYPES: AudienceType[] = ['ALL', 'SEGMENT', 'FILTERED'];

const CAMPAIGN_COLUMNS =
  'id, project_id, name, description, subject, body, from_email, from_name, reply_to, audience_type, segment_id, ' +
  'audience_filter, status, scheduled_at, sent_at, completed_at, cancelled_at, snapshot_at, total_recipients, batch_count, ' +
  'planned_batches, created_at, updated_at';

export interface CampaignRow {
  id: string;
  project_id: string;
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  audience_type: AudienceType;
  segment_id: string | null;
  audience_filter: SegmentCondition | null;
  status: CampaignStatus;
  scheduled_at: Date | null;
  sent_at: Date | null;
  completed_at: Date | null;
  cancelled_at: Date | null;
  snapshot_at: Date | null;
  total_recipients: number;
  batch_count: number;
  planned_batches: number;
  created_at: Date;
  updated_at: Date;
}

/** The writable columns, by API field name. */
export interface CampaignFields {
  name: string;
  description: string | null;
  subject: string;
  body: string;
  from: string;
  fromName: string | null;
  replyTo: string | null;
  audienceType: AudienceType;
  segmentId: string | null;
  audienceFilter: SegmentCondition | null;
}

const COLUMN_OF: Record<keyof CampaignFields, string> = {
  name: 'name',
  description: 'description',
  subject: 'subject',
  body: 'body',
  from: 'from_email',
  fromName: 'from_name',
  replyTo: 'reply_to',
  audienceType: 'audience_type',
  segmentId: 'segment_id',
  audienceFilter: 'audience_filter',
};

const jsonOrValue = (field: keyof CampaignFields, value: unknown) =>
  field === 'audienceFilter' && value !== null ? JSON.stringify(value) : value;

/** A campaign the sweep looks at: unfinished, of any project. */
export interface ActiveCampaign {
  id: string;
  projectId: string;
  status: 'SCHEDULED' | 'SENDING';
  scheduledAt: Date | null;
  snapshotAt: Date | null;
  batchCount: number;
  plannedBatches: number;
}

/**
 * The one writer of `campaigns`. Status moves are conditional updates (`WHERE status IN (...)`), so
 * two racing requests or a request racing a job cannot both move a campaign; the pipeline's steps
 * lock the row (`lock`) inside their transactions. Every statement on a project's campaign is scoped
 * to it; the sweep lists unfinished campaigns of every project.
 */
@Injectable()
export class CampaignsRepository {
  async insert(db: Db, scope: ProjectScope, fields: CampaignFields): Promise<CampaignRow> {
    const [row] = await query<CampaignRow>(
      db,
      `INSERT INTO campaigns (project_id, name, description, subject, body, from_email, from_name, reply_to, audience_type,
                              segment_id, audience_filter)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb)
       RETURNING ${CAMPAIGN_COLUMNS}`,
      [
        scope.projectId,
        fields.name,
        fields.description,
        fields.subject,
        fields.body,
        fields.from,
        fields.fromName,
        fields.replyTo,
        fields.audienceType,
        fields.segmentId,
        jsonOrValue('audienceFilter', fields.audienceFilter),
      ],
    );
    return row;
  }

  /** One page (limit + 1 rows, newest first) and the total matching the filter. */
  list(db: Db, scope: ProjectScope, filter: { limit: number; beforeId?: string; status?: CampaignStatus }) {
    const where = new SqlWhere().add('project_id = ?', scope.projectId);
    if (filter.status) where.add('status = ?', filter.status);
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<CampaignRow>(db, { select: CAMPAIGN_COLUMNS, from: 'campaigns', idColumn: 'id', ...page });
  }

  /** `lock`: FOR UPDATE, inside the caller's transaction (every status move and every batch takes it). */
  findById(db: Db, scope: ProjectScope, input: { id: string; lock?: boolean }): Promise<CampaignRow | null> {
    return queryOne<CampaignRow>(
      db,
      `SELECT ${CAMPAIGN_COLUMNS} FROM campaigns WHERE project_id = $1 AND id = $2${input.lock ? ' FOR UPDATE' : ''}`,
      [scope.projectId, input.id],
    );
  }

  /** Sets the given fields (at least one) of a DRAFT or SCHEDULED campaign; null when it is in no such state. */
  update(db: Db, scope: ProjectScope, input: { id: string; patch: Partial<CampaignFields> }): Promise<CampaignRow | null> {
    const params: unknown[] = [scope.projectId, input.id];
    const sets = (Object.keys(COLUMN_OF) as (keyof CampaignFields)[])
      .filter((field) => input.patch[field] !== undefined)
      .map((field) => {
        params.push(jsonOrValue(field, input.patch[field]));
        return `${COLUMN_OF[field]} = $${params.length}${field === 'audienceFilter' ? '::jsonb' : ''}`;
      });
    return queryOne<CampaignRow>(
      db,
      `UPDATE campaigns SET ${sets.join(', ')}, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('DRAFT', 'SCHEDULED') RETURNING ${CAMPAIGN_COLUMNS}`,
      params,
    );
  }

  async deleteDraft(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    return (await execute(db, `DELETE FROM campaigns WHERE project_id = $1 AND id = $2 AND status = 'DRAFT'`, [scope.projectId, id])) > 0;
  }

  /** DRAFT or SCHEDULED to SCHEDULED at `scheduledAt` (a reschedule moves the time). */
  schedule(db: Db, scope: ProjectScope, input: { id: string; scheduledAt: Date }): Promise<CampaignRow | null> {
    return queryOne<CampaignRow>(
      db,
      `UPDATE campaigns SET status = 'SCHEDULED', scheduled_at = $3, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('DRAFT', 'SCHEDULED') RETURNING ${CAMPAIGN_COLUMNS}`,
      [scope.projectId, input.id, input.scheduledAt],
    );
  }

  /** DRAFT or SCHEDULED to SENDING now. `dueOnly`: only a SCHEDULED campaign whose time has come (the dispatch job). */
  startSending(db: Db, scope: ProjectScope, input: { id: string; dueOnly: boolean }): Promise<CampaignRow | null> {
    const condition = input.dueOnly ? `status = 'SCHEDULED' AND scheduled_at <= now()` : `status IN ('DRAFT', 'SCHEDULED')`;
    return queryOne<CampaignRow>(
      db,
      `UPDATE campaigns SET status = 'SENDING', sent_at = now(), updated_at = now()
        WHERE project_id = $1 AND id = $2 AND ${condition} RETURNING ${CAMPAIGN_COLUMNS}`,
      [scope.projectId, input.id],
    );
  }

  /** SCHEDULED or SENDING to CANCELLED; null when it is in neither state. */
  cancel(db: Db, scope: ProjectScope, id: string): Promise<CampaignRow | null> {
    return queryOne<CampaignRow>(
      db,
      `UPDATE campaigns SET status = 'CANCELLED', cancelled_at = now(), updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('SCHEDULED', 'SENDING') RETURNING ${CAMPAIGN_COLUMNS}`,
      [scope.projectId, id],
    );
  }

  /** The audience snapshot is taken: its size and the number of batches it is planned in. */
  async saveSnapshot(db: Db, scope: ProjectScope, input: { id: string; totalRecipients: number; batchCount: number }): Promise<void> {
    await execute(
      db,
      `UPDATE campaigns SET snapshot_at = now(), total_recipients = $3, batch_count = $4, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND snapshot_at IS NULL`,
      [scope.projectId, input.id, input.totalRecipients, input.batchCount],
    );
  }

  /** One more batch is planned (in that batch's transaction, which holds the row lock). */
  async countPlannedBatch(db: Db, scope: ProjectScope, id: string): Promise<void> {
    await execute(db, `UPDATE campaigns SET planned_batches = planned_batches + 1 WHERE project_id = $1 AND id = $2`, [
      scope.projectId,
      id,
    ]);
  }

  /**
   * SENDING to SENT once every batch is planned and no email of the campaign is QUEUED or SENDING.
   * Run shortly after campaign emails' outcomes (CampaignCompletion) and by the sweep: a primary-key
   * update that matches nothing until the end. The unfinished-email probe walks the partial index
   * newest first: emails go out roughly oldest first, so the entries of those already finished (dead
   * until vacuumed) are behind the live ones. True when this call completed it.
   */
  async completeIfFinished(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE campaigns SET status = 'SENT', completed_at = now(), updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status = 'SENDING' AND snapshot_at IS NOT NULL AND planned_batches >= batch_count
          AND (SELECT e.id FROM emails e WHERE e.campaign_id = $2 AND e.status IN ('QUEUED', 'SENDING') ORDER BY e.id DESC LIMIT 1) IS NULL
        RETURNING 1`,
      [scope.projectId, id],
    );
    return rows.length > 0;
  }

  /** Unfinished campaigns of every project (the sweep), oldest first, a page after `afterId`. */
  active(db: Db, input: { afterId: string | null; limit: number }): Promise<ActiveCampaign[]> {
    return query<ActiveCampaign>(
      db,
      `SELECT id, project_id AS "projectId", status, scheduled_at AS "scheduledAt", snapshot_at AS "snapshotAt",
              batch_count AS "batchCount", planned_batches AS "plannedBatches"
         FROM campaigns
        WHERE status IN ('SCHEDULED', 'SENDING') AND id > $1
        ORDER BY id LIMIT $2`,
      [input.afterId ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
  }
}
