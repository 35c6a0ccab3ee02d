import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Engagement analytics (issue #31, decisions.md "Engagement analytics"): every open and click of a
 * tracked email, each marked as a person's or a machine's.
 *
 * - `email_engagements`: one row per pixel load or link followed, with `machine_reason` (null for a
 *   person; HEAD, USER_AGENT, WINDOW or BURST otherwise) and the link's URL for a click. Its indexes:
 *   `(email_id, occurred_at)` serves the burst rule's look at an email's recent clicks and the cascade
 *   of the email's foreign key (email ids are unique across projects, and every statement still names
 *   the project); `(project_id, campaign_id, url, email_id) INCLUDE (machine)` answers a campaign's
 *   per-link counts from the index alone, already grouped by link and recipient.
 * - `emails` keeps the first of each kind: `opened_at` / `clicked_at` now mean a person's first open
 *   and click (what campaign stats and the `campaign.<id>` segment field count; an open or click
 *   recorded before this migration counts as a person's, as it was counted), and
 *   `machine_opened_at` / `machine_clicked_at` a machine's.
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
      CREATE INDEX email_engagements_campaign_links_idx ON email_engagements (project_id, campaign_id, url, email_id) INCLUDE (machine)
       WHERE kind = 'CLICK' AND campaign_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE email_engagements`);
    await q.query(`ALTER TABLE emails DROP COLUMN machine_opened_at, DROP COLUMN machine_clicked_at`);
  }
}
