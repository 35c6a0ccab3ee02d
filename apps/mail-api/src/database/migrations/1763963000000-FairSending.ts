import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair sending (decisions.md "Fair sending and run-time rate", issue #30).
 *
 * - `projects.max_send_rate`: a project's own cap in emails per second (NULL: its fair share only),
 *   set with `npm run mail -- project:set-rate`.
 * - `emails.fed_at`: when the marketing feeder handed a campaign or workflow email to the email queue.
 *   Marketing mail waits in Postgres until then (MarketingFeeder), so the queue holds only about a
 *   second of it, fed round-robin by project. Unfinished marketing emails present now already have
 *   their jobs (the previous release enqueued them directly): they count as fed. An email the previous
 *   release writes and enqueues after this migration is fed again: its job id is the email id, so the
 *   second add is a no-op.
 * - The partial index of the waiting marketing backlog, led by project_id: the feeder's skip scan of
 *   the projects with a backlog and its oldest emails per project.
 */
export class FairSending1763963000000 implements MigrationInterface {
  name = 'FairSending1763963000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE projects ADD COLUMN max_send_rate integer CHECK (max_send_rate IS NULL OR max_send_rate >= 1)`);
    await q.query(`ALTER TABLE emails ADD COLUMN fed_at timestamptz`);
    await q.query(`
      UPDATE emails SET fed_at = now()
       WHERE status IN ('QUEUED', 'SENDING') AND (campaign_id IS NOT NULL OR workflow_id IS NOT NULL)`);
    await q.query(`
      CREATE INDEX emails_marketing_backlog_idx ON emails (project_id, queued_at, id)
       WHERE status = 'QUEUED' AND fed_at IS NULL AND (campaign_id IS NOT NULL OR workflow_id IS NOT NULL)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX emails_marketing_backlog_idx`);
    await q.query(`ALTER TABLE emails DROP COLUMN fed_at`);
    await q.query(`ALTER TABLE projects DROP COLUMN max_send_rate`);
  }
}
