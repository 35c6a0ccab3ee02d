import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, type Db } from '@app/service-kit';

/** Campaigns whose progress is reported (newest first): a bound on the label values. */
export const MAX_REPORTED_CAMPAIGNS = 50;

export interface StatusCountRow {
  status: string;
  count: number;
}

export interface CampaignStatusCountRow {
  campaign_id: string;
  status: string;
  count: number;
}

export interface SendingCampaignRow {
  campaign_id: string;
  total_recipients: number;
}

/**
 * Deployment-wide counts for `GET /metrics` (reads only; every table here has its own writer). They
 * span all projects on purpose: an operator's view, never returned to an API client. Campaign tables
 * are read only when they exist (`to_regclass`), so the metrics work on any schema version.
 */
@Injectable()
export class MetricsRepository {
  /** Bounds every statement of a scrape: a slow count must not hold a pooled connection for long. */
  async limitStatementTime(db: Db, milliseconds: number): Promise<void> {
    await execute(db, `SELECT set_config('statement_timeout', $1, true)`, [String(milliseconds)]);
  }

  async emailsByStatus(db: Db): Promise<StatusCountRow[]> {
    return query<StatusCountRow>(db, `SELECT status, count(*)::int AS count FROM emails GROUP BY status`);
  }

  async hasCampaignTables(db: Db): Promise<boolean> {
    const row = await queryOne<{ present: boolean }>(
      db,
      `SELECT to_regclass('campaigns') IS NOT NULL AND to_regclass('campaign_recipients') IS NOT NULL AS present`,
    );
    return row?.present ?? false;
  }

  async campaignsByStatus(db: Db): Promise<StatusCountRow[]> {
    return query<StatusCountRow>(db, `SELECT status, count(*)::int AS count FROM campaigns GROUP BY status`);
  }

  /** The SENDING campaigns (newest first, at most MAX_REPORTED_CAMPAIGNS) and their audience sizes. */
  async sendingCampaigns(db: Db): Promise<SendingCampaignRow[]> {
    return query<SendingCampaignRow>(
      db,
      `SELECT id AS campaign_id, total_recipients FROM campaigns WHERE status = 'SENDING' ORDER BY id DESC LIMIT $1`,
      [MAX_REPORTED_CAMPAIGNS],
    );
  }

  /** Emails of the given campaigns by status (the unique (campaign, contact) index serves it). */
  async campaignEmailsByStatus(db: Db, campaignIds: string[]): Promise<CampaignStatusCountRow[]> {
    if (campaignIds.length === 0) return [];
    return query<CampaignStatusCountRow>(
      db,
      `SELECT campaign_id, status, count(*)::int AS count FROM emails
        WHERE campaign_id = ANY($1::uuid[]) GROUP BY campaign_id, status`,
      [campaignIds],
    );
  }

  /** The audience snapshot of the given campaigns by recipient status (PENDING, QUEUED, SKIPPED). */
  async campaignRecipientsByStatus(db: Db, campaignIds: string[]): Promise<CampaignStatusCountRow[]> {
    if (campaignIds.length === 0) return [];
    return query<CampaignStatusCountRow>(
      db,
      `SELECT campaign_id, status, count(*)::int AS count FROM campaign_recipients
        WHERE campaign_id = ANY($1::uuid[]) GROUP BY campaign_id, status`,
      [campaignIds],
    );
  }
}
