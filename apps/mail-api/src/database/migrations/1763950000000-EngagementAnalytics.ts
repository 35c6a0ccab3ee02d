import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Engagement analytics (issue #31, decisions.md "Engagement analytics"): every open and click of a
 * tracked email, each marked as a person's or a machine's, and what campaign stats, per-link counts
 * and the `campaign.<id>` segment field read.
 *
 * - `email_engagements`: one row per pixel load or link followed, with `machine_reason` (null for a
 *   person; HEAD, USER_AGENT, WINDOW or BURST otherwise) and the link's URL for a click. Its index
 *   `(email_id, occurred_at)` serves the burst rule's look at an email's recent clicks, the "first
 *   person's click on this link" check and the cascade of the email's foreign key (email ids are unique
 *   across projects; every statement still names the project).
 * - `campaign_link_clicks`: per (campaign, link) counters, added to in the transaction that records
 *   the clicks: `GET /campaigns/{id}/links` reads a few rows instead of aggregating every click.
 * - `emails` keeps the first of each kind: `opened_at` / `clicked_at` now mean a person's first open
 *   and click (an open or click recorded before this migration counts as a person's, as it was
 *   counted), and `machine_opened_at` / `machine_clicked_at` a machine's. The unique (campaign,
 *   contact) index is rebuilt to INCLUDE the columns campaign stats and campaign segment filters read,
 *   so both are answered from the index alone (status already kept updates of these rows from being
 *   HOT, so the wider index costs no HOT update that was possible before, but the first opens').
 */
export class EngagementAnalytics1763950000000 implements MigrationInterface {
  name = 'EngagementAnalytics1763950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails ADD COLUMN machine_opened_at timestamptz, ADD COLUMN machine_clicked_at timestamptz`);
    await q.query(`
      CREATE TABLE email_engagements (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL,
        email_id uuid NOT NULL REFERENCES emails(id) ON DELETE CASCADE,
        campaign_id uuid,
        kind text NOT NULL CHECK (kind IN ('OPEN', 'CLICK')),
        url text,
        machine boolean NOT NULL,
        machine_reason text CHECK (machine_reason IN ('HEAD', 'USER_AGENT', 'WINDOW', 'BURST')),
        occurred_at timestamptz NOT NULL,
        CONSTRAINT email_engagements_click_url CHECK ((kind = 'CLICK') = (url IS NOT NULL)),
        CONSTRAINT email_engagements_machine_reason CHECK (machine = (machine_reason IS NOT NULL))
      )`);
    await q.query(`CREATE INDEX email_engagements_email_idx ON email_engagements (email_id, occurred_at)`);

    await q.query(`
      CREATE TABLE campaign_link_clicks (
        project_id uuid NOT NULL,
        campaign_id uuid NOT NULL,
        url text NOT NULL,
        clicks integer NOT NULL,
        unique_clicks integer NOT NULL,
        machine_clicks integer NOT NULL,
        PRIMARY KEY (project_id, campaign_id, url)
      )`);

    await q.query(`
      CREATE UNIQUE INDEX emails_campaign_recipient_uq ON emails (campaign_id, contact_id)
       INCLUDE (project_id, status, opened_at, clicked_at, machine_opened_at, machine_clicked_at, bounced_at)
       WHERE campaign_id IS NOT NULL`);
    await q.query(`DROP INDEX emails_campaign_contact_uq`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`CREATE UNIQUE INDEX emails_campaign_contact_uq ON emails (campaign_id, contact_id) WHERE campaign_id IS NOT NULL`);
    await q.query(`DROP INDEX emails_campaign_recipient_uq`);
    await q.query(`DROP TABLE campaign_link_clicks`);
    await q.query(`DROP TABLE email_engagements`);
    await q.query(`ALTER TABLE emails DROP COLUMN machine_opened_at, DROP COLUMN machine_clicked_at`);
  }
}
