import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Crash safety of a confirm (decisions.md "AI assistant"): the claim that moves an action to
 * `executing` carries an id and a lease the confirming process renews while the tool runs, and the
 * moment the tool is about to run is committed first (`execution_started_at`). The worker returns an
 * action whose lease lapsed to `pending` when its tool never started, and to `failed` (`interrupted`)
 * when it may have run; it finds them by lease, among the few rows that are `executing`.
 */
export class AiPendingActionLease1763939300000 implements MigrationInterface {
  name = 'AiPendingActionLease1763939300000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE ai_pending_actions
        ADD COLUMN execution_claim_id uuid,
        ADD COLUMN execution_lease_until timestamptz,
        ADD COLUMN execution_started_at timestamptz`);
    await q.query(
      `CREATE INDEX ai_pending_actions_executing_lease_idx ON ai_pending_actions (execution_lease_until) WHERE status = 'executing'`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ai_pending_actions_executing_lease_idx`);
    await q.query(`
      ALTER TABLE ai_pending_actions
        DROP COLUMN execution_claim_id, DROP COLUMN execution_lease_until, DROP COLUMN execution_started_at`);
  }
}
