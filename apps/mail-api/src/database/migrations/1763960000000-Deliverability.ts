import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The deliverability loop (issue #28, decisions.md "Deliverability"):
 *
 * - `suppressions`: the addresses a project never mails again, with why (`HARD_BOUNCE`, `COMPLAINT`,
 *   `MANUAL`) and where it was learnt (`smtp`, `dsn`, `arf`, `api`). One row per address per project,
 *   compared case-insensitively: the unique index on `(project_id, lower(email))` is also the one
 *   lookup the delivery claim makes per email. `(project_id, id)` serves the newest-first pages.
 * - `emails.status` gains `SUPPRESSED` (the recipient was on the list when the email was about to be
 *   handed to SMTP: never sent) and `BOUNCED` (accepted, then bounced by an asynchronous DSN).
 * - `emails.complained_at`: the first complaint (ARF) about the email; `soft_bounces`: temporary
 *   refusals (SMTP 4xx) so far, which pick the next retry delay. The campaign recipient index is rebuilt
 *   to INCLUDE `complained_at`, so campaign stats stay answered from the index alone.
 */
export class Deliverability1763960000000 implements MigrationInterface {
  name = 'Deliverability1763960000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE suppressions (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        email text NOT NULL,
        reason text NOT NULL CHECK (reason IN ('HARD_BOUNCE', 'COMPLAINT', 'MANUAL')),
        source text NOT NULL CHECK (source IN ('smtp', 'dsn', 'arf', 'api')),
        detail text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX suppressions_project_email_uq ON suppressions (project_id, lower(email))`);
    await q.query(`CREATE INDEX suppressions_project_id_idx ON suppressions (project_id, id)`);

    await q.query(`ALTER TABLE emails DROP CONSTRAINT emails_status_check`);
    await q.query(`
      ALTER TABLE emails ADD CONSTRAINT emails_status_check
        CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'FAILED', 'CANCELLED', 'SUPPRESSED', 'BOUNCED')) NOT VALID`);
    await q.query(`ALTER TABLE emails VALIDATE CONSTRAINT emails_status_check`);
    await q.query(`ALTER TABLE emails ADD COLUMN complained_at timestamptz, ADD COLUMN soft_bounces integer NOT NULL DEFAULT 0`);

    await q.query(`
      CREATE UNIQUE INDEX emails_campaign_recipient_v2_uq ON emails (campaign_id, contact_id)
       INCLUDE (project_id, status, opened_at, clicked_at, machine_opened_at, machine_clicked_at, bounced_at, complained_at)
       WHERE campaign_id IS NOT NULL`);
    await q.query(`DROP INDEX emails_campaign_recipient_uq`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE UNIQUE INDEX emails_campaign_recipient_uq ON emails (campaign_id, contact_id)
       INCLUDE (project_id, status, opened_at, clicked_at, machine_opened_at, machine_clicked_at, bounced_at)
       WHERE campaign_id IS NOT NULL`);
    await q.query(`DROP INDEX emails_campaign_recipient_v2_uq`);
    await q.query(`ALTER TABLE emails DROP COLUMN complained_at, DROP COLUMN soft_bounces`);
    await q.query(`UPDATE emails SET status = 'FAILED' WHERE status IN ('SUPPRESSED', 'BOUNCED')`);
    await q.query(`ALTER TABLE emails DROP CONSTRAINT emails_status_check`);
    await q.query(`
      ALTER TABLE emails ADD CONSTRAINT emails_status_check
        CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'FAILED', 'CANCELLED'))`);
    await q.query(`DROP TABLE suppressions`);
  }
}
