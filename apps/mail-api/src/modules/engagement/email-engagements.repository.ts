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

/** What a batch adds to one link's counters of a campaign. */
export interface LinkClicks {
  projectId: string;
  campaignId: string;
  url: string;
  clicks: number;
  uniqueClicks: number;
  machineClicks: number;
}

/**
 * The one writer of `email_engagements` (every open and click of tracked emails, a person's or a
 * machine's) and of `campaign_link_clicks` (per-link counters of campaigns, added to in the same
 * transaction). Batches may hold several projects' rows: each row carries its project, and every
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

  /** Which of these (email, link) pairs a person clicked before: `emailId url` keys. */
  async personClickedLinks(tx: Db, input: { clicks: { emailId: string; projectId: string; url: string }[] }): Promise<Set<string>> {
    const { clicks } = input;
    if (clicks.length === 0) return new Set();
    const rows = await queryPrepared<{ key: string }>(
      tx,
      `SELECT DISTINCT g.email_id || ' ' || g.url AS key
         FROM unnest($1::uuid[], $2::uuid[], $3::text[]) AS c(email_id, project_id, url)
         JOIN email_engagements g ON g.email_id = c.email_id AND g.project_id = c.project_id AND g.url = c.url
        WHERE g.kind = 'CLICK' AND NOT g.machine`,
      [clicks.map((c) => c.emailId), clicks.map((c) => c.projectId), clicks.map((c) => c.url)],
    );
    return new Set(rows.map((r) => r.key));
  }

  /**
   * Adds to campaigns' link counters, one statement. Rows go in key order, so two batches adding to the
   * same links lock them in the same order (they wait, never deadlock).
   */
  async addLinkClicks(tx: Db, input: { links: LinkClicks[] }): Promise<void> {
    const links = [...input.links].sort((a, b) => compareKeys([a.projectId, a.campaignId, a.url], [b.projectId, b.campaignId, b.url]));
    if (links.length === 0) return;
    await queryPrepared(
      tx,
      `INSERT INTO campaign_link_clicks (project_id, campaign_id, url, clicks, unique_clicks, machine_clicks)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::int[], $5::int[], $6::int[])
       ON CONFLICT (project_id, campaign_id, url) DO UPDATE
          SET clicks = campaign_link_clicks.clicks + EXCLUDED.clicks,
              unique_clicks = campaign_link_clicks.unique_clicks + EXCLUDED.unique_clicks,
              machine_clicks = campaign_link_clicks.machine_clicks + EXCLUDED.machine_clicks`,
      [
        links.map((l) => l.projectId),
        links.map((l) => l.campaignId),
        links.map((l) => l.url),
        links.map((l) => l.clicks),
        links.map((l) => l.uniqueClicks),
        links.map((l) => l.machineClicks),
      ],
    );
  }
}

/** A fixed total order of link keys (any one will do, as long as every batch uses the same). */
function compareKeys(a: string[], b: string[]): number {
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}
