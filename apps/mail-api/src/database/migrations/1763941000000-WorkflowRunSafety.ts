import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workflow run safety (issue #27, decisions.md "Workflow and tracking safety").
 *
 * - `emails.workflow_id`: the workflow whose execution wrote the email. The `email.*` events of that
 *   email (which carry `data.emailId`) never start that same workflow again: a workflow on
 *   `email.bounced` that mails a bouncing address would otherwise restart itself on every bounce. No FK:
 *   the execution's row already ties the email to its workflow, and an FK would make every workflow email
 *   insert take a lock on the workflow's row. Existing workflow emails get it from their execution.
 * - `workflow_executions_runs_idx`: how many executions of a workflow a contact started in the last
 *   24 h (MAIL_WORKFLOW_MAX_RUNS_PER_DAY), counted on the index alone by the start statement.
 */
export class WorkflowRunSafety1763941000000 implements MigrationInterface {
  name = 'WorkflowRunSafety1763941000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE emails ADD COLUMN workflow_id uuid`);
    await q.query(`
      UPDATE emails e SET workflow_id = x.workflow_id
        FROM workflow_executions x
       WHERE e.workflow_execution_id IS NOT NULL AND x.id = e.workflow_execution_id`);
    await q.query(`CREATE INDEX workflow_executions_runs_idx ON workflow_executions (project_id, workflow_id, contact_id, started_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX workflow_executions_runs_idx`);
    await q.query(`ALTER TABLE emails DROP COLUMN workflow_id`);
  }
}
