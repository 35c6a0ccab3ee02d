import { Injectable } from '@nestjs/common';
import type { ContactDataPrimitive } from '@app/contracts';
import { execute, query, queryOne, queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { compileCondition, segmentAudiencePredicate, type SegmentCondition } from '../segments/segment-condition.js';

/** Who a campaign goes to, among the project's subscribed contacts. */
export type Audience =
  | { kind: 'ALL' }
  | { kind: 'SEGMENT'; segment: { id: string; type: 'DYNAMIC' | 'STATIC'; condition: SegmentCondition | null } }
  | { kind: 'FILTERED'; condition: SegmentCondition };

/** A recipient of a batch, with its contact as it is now (null fields: the contact was deleted). */
export interface BatchRecipient {
  seq: number;
  contactId: string;
  email: string | null;
  data: Record<string, ContactDataPrimitive> | null;
  subscribed: boolean | null;
}

/** What a batch decided for one recipient: its email, or why it gets none. */
export type RecipientOutcome = { seq: number; emailId: string } | { seq: number; skipReason: string };

export interface CampaignEmailCounts {
  delivered: number;
  bounced: number;
  /** Recipients with a person's open / click (a click counts as an open). */
  opened: number;
  clicked: number;
  /** Recipients with a machine's open / click. */
  machineOpened: number;
  machineClicked: number;
  /** Recipients on the suppression list when their email was about to be sent (SUPPRESSED). */
  suppressed: number;
  /** Emails a complaint (ARF) report came back for. */
  complained: number;
}

/**
 * The one writer of `campaign_recipients`: the audience snapshot (one INSERT ... SELECT, numbered
 * 1..n in contact id order, so batch k is the keyset range of seq ((k-1)*size, k*size]) and each
 * batch's outcome. Also the reads of a campaign's delivery progress on `emails` (its backlog, its
 * unfinished emails for the sweep, its stats). Every statement is scoped to the project. Statements
 * holding a compiled audience run unnamed (`query`): their texts vary per audience.
 */
@Injectable()
export class CampaignRecipientsRepository {
  /**
   * Snapshots the audience: every subscribed contact of the project the audience selects, once
   * (unique (campaign, contact); ON CONFLICT DO NOTHING), in one statement: nothing is loaded into
   * the process. Returns how many recipients the campaign has.
   */
  snapshot(tx: Db, scope: ProjectScope, input: { campaignId: string; audience: Audience }): Promise<number> {
    const params: unknown[] = [scope.projectId, input.campaignId];
    const { audience } = input;
    const predicate =
      audience.kind === 'ALL'
        ? 'true'
        : audience.kind === 'SEGMENT'
          ? segmentAudiencePredicate(audience.segment, 'c', params)
          : compileCondition(audience.condition, 'c', params);
    return execute(
      tx,
      `INSERT INTO campaign_recipients (project_id, campaign_id, seq, contact_id)
       SELECT $1, $2, row_number() OVER (ORDER BY c.id), c.id
         FROM contacts c
        WHERE c.project_id = $1 AND c.subscribed AND ${predicate}
       ON CONFLICT DO NOTHING`,
      params,
    );
  }

  /** The recipients of seq range [fromSeq, toSeq] not planned yet, with their contacts. */
  pending(db: Db, scope: ProjectScope, input: { campaignId: string; fromSeq: number; toSeq: number }): Promise<BatchRecipient[]> {
    return queryPrepared<BatchRecipient>(
      db,
      `SELECT r.seq, r.contact_id AS "contactId", c.email, c.data, c.subscribed
         FROM campaign_recipients r
         LEFT JOIN contacts c ON c.id = r.contact_id AND c.project_id = r.project_id
        WHERE r.project_id = $1 AND r.campaign_id = $2 AND r.seq BETWEEN $3 AND $4 AND r.status = 'PENDING'
        ORDER BY r.seq`,
      [scope.projectId, input.campaignId, input.fromSeq, input.toSeq],
    );
  }

  /** Records each recipient's outcome (QUEUED with its email, or SKIPPED), in the batch's transaction. */
  record(tx: Db, scope: ProjectScope, input: { campaignId: string; outcomes: RecipientOutcome[] }): Promise<number> {
    const { outcomes } = input;
    return execute(
      tx,
      `UPDATE campaign_recipients r
          SET status = CASE WHEN u.email_id IS NULL THEN 'SKIPPED' ELSE 'QUEUED' END, email_id = u.email_id, skip_reason = u.reason
         FROM unnest($3::int[], $4::uuid[], $5::text[]) AS u(seq, email_id, reason)
        WHERE r.project_id = $1 AND r.campaign_id = $2 AND r.seq = u.seq AND r.status = 'PENDING'`,
      [
        scope.projectId,
        input.campaignId,
        outcomes.map((o) => o.seq),
        outcomes.map((o) => ('emailId' in o ? o.emailId : null)),
        outcomes.map((o) => ('skipReason' in o ? o.skipReason : null)),
      ],
    );
  }

  /** Whether the batch starting at `fromSeq` was planned already (its first recipient is). */
  async isPlanned(db: Db, scope: ProjectScope, input: { campaignId: string; fromSeq: number }): Promise<boolean> {
    const row = await queryOne<{ status: string }>(
      db,
      `SELECT status FROM campaign_recipients WHERE project_id = $1 AND campaign_id = $2 AND seq = $3`,
      [scope.projectId, input.campaignId, input.fromSeq],
    );
    return row !== null && row.status !== 'PENDING';
  }

  /** Among the given first seqs of batches, those whose batch is not planned yet (the sweep). */
  async pendingBatchStarts(db: Db, scope: ProjectScope, input: { campaignId: string; seqs: number[] }): Promise<number[]> {
    if (input.seqs.length === 0) return [];
    const rows = await query<{ seq: number }>(
      db,
      `SELECT seq FROM campaign_recipients WHERE project_id = $1 AND campaign_id = $2 AND seq = ANY($3::int[]) AND status = 'PENDING'`,
      [scope.projectId, input.campaignId, input.seqs],
    );
    return rows.map((r) => r.seq);
  }

  /** The campaign's QUEUED and SENDING emails, counted up to `cap` (the batches' pacing). */
  async backlog(db: Db, scope: ProjectScope, input: { campaignId: string; cap: number }): Promise<number> {
    const row = await queryOne<{ n: number }>(
      db,
      `SELECT count(*)::int AS n FROM (
         SELECT 1 FROM emails WHERE campaign_id = $2 AND project_id = $1 AND status IN ('QUEUED', 'SENDING') LIMIT $3) s`,
      [scope.projectId, input.campaignId, input.cap],
    );
    return row?.n ?? 0;
  }

  /** A page of the campaign's emails that should have a delivery job: QUEUED, or SENDING with a lapsed claim. */
  async unfinishedEmailIds(
    db: Db,
    scope: ProjectScope,
    input: { campaignId: string; afterId: string | null; limit: number },
  ): Promise<string[]> {
    const rows = await query<{ id: string }>(
      db,
      `SELECT id FROM emails
        WHERE campaign_id = $2 AND project_id = $1 AND status IN ('QUEUED', 'SENDING') AND fed_at IS NOT NULL
          AND (status = 'QUEUED' OR claimed_until < now()) AND id > $3
        ORDER BY id LIMIT $4`,
      [scope.projectId, input.campaignId, input.afterId ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
    return rows.map((r) => r.id);
  }

  /** Delivered (SENT), bounced, opened and clicked (by a person; by a machine) emails of the campaign: one per recipient. */
  async emailCounts(db: Db, scope: ProjectScope, campaignId: string): Promise<CampaignEmailCounts> {
    const row = await queryOne<CampaignEmailCounts>(
      db,
      `SELECT count(*) FILTER (WHERE status = 'SENT')::int AS delivered,
              count(*) FILTER (WHERE bounced_at IS NOT NULL)::int AS bounced,
              count(*) FILTER (WHERE opened_at IS NOT NULL)::int AS opened,
              count(*) FILTER (WHERE clicked_at IS NOT NULL)::int AS clicked,
              count(*) FILTER (WHERE machine_opened_at IS NOT NULL)::int AS "machineOpened",
              count(*) FILTER (WHERE machine_clicked_at IS NOT NULL)::int AS "machineClicked",
              count(*) FILTER (WHERE status = 'SUPPRESSED')::int AS suppressed,
              count(*) FILTER (WHERE complained_at IS NOT NULL)::int AS complained
         FROM emails WHERE campaign_id = $2 AND project_id = $1`,
      [scope.projectId, campaignId],
    );
    return row ?? { delivered: 0, bounced: 0, opened: 0, clicked: 0, machineOpened: 0, machineClicked: 0, suppressed: 0, complained: 0 };
  }
}
