import { Injectable } from '@nestjs/common';
import { queryPrepared, type Db } from '@app/service-kit';
import type { MachineReason, PriorClick } from './machine-detection.js';

/** One open or click, as recorded. */
export interface EngagementRow {
  projectId: string;
  emailId: string;
  campaignId: string | null;
  kind: 'OPEN' | 'CLICK';
  /** The link's URL (clicks only). */
  url: string | null;
  machineReason: MachineReason | null;
  occurredAt: Date;
}

/**
 * The one writer of `email_engagements`: every open and click of tracked emails, a person's or a
 * machine's. Batches may hold several projects' rows: each row carries its project, and every
 * statement matches rows on it.
 */
@Injectable()
export class EmailEngagementsRepository {
  /** The rows of a batch, in one statement. */
  async insertMany(tx: Db, input: { rows: EngagementRow[] }): Promise<void> {
    const { rows } = input;
    if (rows.length === 0) return;
    await queryPrepared(
      tx,
      `INSERT INTO email_engagements (project_id, email_id, campaign_id, kind, url, machine, machine_reason, occurred_at)
       SELECT r.project_id, r.email_id, r.campaign_id, r.kind, r.url, r.machine_reason IS NOT NULL, r.machine_reason, r.occurred_at
         FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
              AS r(project_id, email_id, campaign_id, kind, url, machine_reason, occurred_at)`,
      [
        rows.map((r) => r.projectId),
        rows.map((r) => r.emailId),
        rows.map((r) => r.campaignId),
        rows.map((r) => r.kind),
        rows.map((r) => r.url),
        rows.map((r) => r.machineReason),
        rows.map((r) => r.occurredAt),
      ],
    );
  }

  /** The clicks of these emails at or after `since` (the burst rule's window), by email and time. */
  recentClicks(tx: Db, input: { emails: { emailId: string; projectId: string }[]; since: Date }): Promise<PriorClick[]> {
    return queryPrepared<PriorClick>(
      tx,
      `SELECT g.email_id AS "emailId", g.url, (extract(epoch FROM g.occurred_at) * 1000)::float8 AS at
         FROM unnest($1::uuid[], $2::uuid[]) AS e(email_id, project_id)
         JOIN email_engagements g ON g.email_id = e.email_id AND g.project_id = e.project_id
        WHERE g.kind = 'CLICK' AND g.occurred_at >= $3
        ORDER BY g.email_id, g.occurred_at`,
      [input.emails.map((e) => e.emailId), input.emails.map((e) => e.projectId), input.since],
    );
  }
}
