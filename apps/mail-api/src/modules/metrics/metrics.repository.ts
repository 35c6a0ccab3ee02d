import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, type Db } from '@app/service-kit';

export interface StatusCountRow {
  status: string;
  count: number;
}

/**
 * Deployment-wide counts for `GET /metrics` (reads only; every table here has its own writer). They
 * span all projects on purpose: an operator's view, never returned to an API client, and never split
 * by project or campaign (no per-customer id is a label value: decisions.md "Operator contract"). Campaign tables
 * are read only when they exist (`to_regclass`), so the metrics work on any schema version.
 */
@Injectable()
export class MetricsRepository {
  /** Bounds every statement of a scrape: a slow count must not hold a pooled connection for long. */
  async limitStatementTime(db: Db, milliseconds: number): Promise<void> {
    await execute(db, `SELECT set_config('statement_timeout', $1, true)`, [String(milliseconds)]);
  }

  /**
   * The backlog: emails QUEUED or SENDING, read through the partial index `emails_unfinished_idx`
   * (only unfinished rows are in it), never a scan of the whole table. Finished emails are counted
   * by the delivery counters (`mail_emails_sent_total{outcome}`), not here.
   */
  async unfinishedEmailsByStatus(db: Db): Promise<StatusCountRow[]> {
    return query<StatusCountRow>(
      db,
      `SELECT status, count(*)::int AS count FROM emails WHERE status IN ('QUEUED', 'SENDING') GROUP BY status`,
    );
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

  /** Audience size of every SENDING campaign together (one number: no campaign id is ever a label value). */
  async sendingAudience(db: Db): Promise<number> {
    const row = await queryOne<{ total: number }>(
      db,
      `SELECT coalesce(sum(total_recipients), 0)::bigint::float8 AS total FROM campaigns WHERE status = 'SENDING'`,
    );
    return row?.total ?? 0;
  }

  /** Emails of the SENDING campaigns by delivery status (the unique (campaign, contact) index serves it). */
  async sendingCampaignEmailsByStatus(db: Db): Promise<StatusCountRow[]> {
    return query<StatusCountRow>(
      db,
      `SELECT status, count(*)::int AS count FROM emails
        WHERE campaign_id IN (SELECT id FROM campaigns WHERE status = 'SENDING') GROUP BY status`,
    );
  }

  /** The audience snapshots of the SENDING campaigns by recipient status (PENDING, QUEUED, SKIPPED). */
  async sendingCampaignRecipientsByStatus(db: Db): Promise<StatusCountRow[]> {
    return query<StatusCountRow>(
      db,
      `SELECT status, count(*)::int AS count FROM campaign_recipients
        WHERE campaign_id IN (SELECT id FROM campaigns WHERE status = 'SENDING') GROUP BY status`,
    );
  }
}
