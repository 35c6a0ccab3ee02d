import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Campaigns and their staged send pipeline (issue #13): the campaign, its audience snapshot
 * (`campaign_recipients`, one row per (campaign, contact), numbered 1..n so batches are keyset ranges),
 * and on `emails` the CANCELLED status, engagement timestamps (opened, clicked, bounced) and the unique
 * (campaign, contact) index: the last line of "at most one email per recipient", whatever retries,
 * crashes or Redis losses happen above it.
 */
export class Campaigns1763910000000 implements MigrationInterface {
  name = 'Campaigns1763910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE campaigns (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        subject text NOT NULL,
        body text NOT NULL,
        from_email text NOT NULL,
        from_name text,
        reply_to text,
        audience_type text NOT NULL CHECK (audience_type IN ('ALL', 'SEGMENT', 'FILTERED')),
        -- No foreign key: the segments module owns its table; a SCHEDULED or SENDING campaign keeps its
        -- segment from being deleted (409 SEGMENT_IN_USE), a DRAFT's missing segment is refused at send.
        segment_id uuid,
        audience_filter jsonb,
        status text NOT NULL DEFAULT 'DRAFT' CHECK (status IN ('DRAFT', 'SCHEDULED', 'SENDING', 'SENT', 'CANCELLED')),
        scheduled_at timestamptz,
        -- When sending started (SENDING), finished (SENT) or was cancelled.
        sent_at timestamptz,
        completed_at timestamptz,
        cancelled_at timestamptz,
        -- The audience snapshot: taken once, when sending starts; then batches of recipients are planned.
        snapshot_at timestamptz,
        total_recipients integer NOT NULL DEFAULT 0,
        batch_count integer NOT NULL DEFAULT 0,
        planned_batches integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT campaigns_segment_audience CHECK ((audience_type = 'SEGMENT') = (segment_id IS NOT NULL)),
        CONSTRAINT campaigns_filtered_audience CHECK ((audience_type = 'FILTERED') = (audience_filter IS NOT NULL))
      )`);
    // Keyset pages (GET /campaigns), with and without the status filter.
    await q.query(`CREATE INDEX campaigns_project_id_idx ON campaigns (project_id, id)`);
    await q.query(`CREATE INDEX campaigns_project_status_idx ON campaigns (project_id, status, id)`);
    // The sweep reads the unfinished campaigns only; DELETE /segments/{id} asks whether one uses the segment.
    await q.query(`CREATE INDEX campaigns_active_idx ON campaigns (status, scheduled_at) WHERE status IN ('SCHEDULED', 'SENDING')`);
    await q.query(`CREATE INDEX campaigns_active_segment_idx ON campaigns (segment_id) WHERE status IN ('SCHEDULED', 'SENDING')`);
    // DELETE /domains/{id} asks whether an unfinished campaign sends from the domain.
    await q.query(`
      CREATE INDEX campaigns_from_domain_idx ON campaigns (project_id, lower(split_part(from_email, '@', 2)))
       WHERE status IN ('DRAFT', 'SCHEDULED', 'SENDING')`);

    // No foreign keys: a snapshot of a million contacts is one INSERT ... SELECT, and a per-row
    // referential check would cost more than the insert. Rows go with their campaign (only a DRAFT,
    // which has none, can be deleted) and outlive a deleted contact (the batch skips it).
    await q.query(`
      CREATE TABLE campaign_recipients (
        project_id uuid NOT NULL,
        campaign_id uuid NOT NULL,
        seq integer NOT NULL,
        contact_id uuid NOT NULL,
        status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'QUEUED', 'SKIPPED')),
        email_id uuid,
        skip_reason text,
        PRIMARY KEY (project_id, campaign_id, seq),
        CONSTRAINT campaign_recipients_contact_uq UNIQUE (campaign_id, contact_id)
      ) WITH (fillfactor = 80)`);

    // CANCELLED: an email of a cancelled campaign that was not sent (never sent afterwards).
    await q.query(`ALTER TABLE emails DROP CONSTRAINT emails_status_check`);
    await q.query(`
      ALTER TABLE emails ADD CONSTRAINT emails_status_check
        CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'FAILED', 'CANCELLED')) NOT VALID`);
    await q.query(`ALTER TABLE emails VALIDATE CONSTRAINT emails_status_check`);
    // First open and first click (the pixel, a tracked link), and a permanent refusal by the relay.
    await q.query(
      `ALTER TABLE emails ADD COLUMN opened_at timestamptz, ADD COLUMN clicked_at timestamptz, ADD COLUMN bounced_at timestamptz`,
    );
    // One email per (campaign, contact): also the index of a campaign's stats.
    await q.query(`CREATE UNIQUE INDEX emails_campaign_contact_uq ON emails (campaign_id, contact_id) WHERE campaign_id IS NOT NULL`);
    // A campaign's unfinished emails: its backlog (batch pacing), cancel, completion and the sweep.
    await q.query(`
      CREATE INDEX emails_campaign_unfinished_idx ON emails (campaign_id, id)
       WHERE campaign_id IS NOT NULL AND status IN ('QUEUED', 'SENDING')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX emails_campaign_unfinished_idx`);
    await q.query(`DROP INDEX emails_campaign_contact_uq`);
    await q.query(`ALTER TABLE emails DROP COLUMN opened_at, DROP COLUMN clicked_at, DROP COLUMN bounced_at`);
    await q.query(`UPDATE emails SET status = 'FAILED' WHERE status = 'CANCELLED'`);
    await q.query(`ALTER TABLE emails DROP CONSTRAINT emails_status_check`);
    await q.query(`ALTER TABLE emails ADD CONSTRAINT emails_status_check CHECK (status IN ('QUEUED', 'SENDING', 'SENT', 'FAILED'))`);
    await q.query(`DROP TABLE campaign_recipients`);
    await q.query(`DROP TABLE campaigns`);
  }
}
