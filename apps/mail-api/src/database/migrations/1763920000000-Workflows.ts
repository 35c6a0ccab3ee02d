import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Workflows and their executions (issue #15). Postgres holds every execution's state: BullMQ jobs only
 * say "look at this step row now", and the sweep rebuilds them from the rows below after a Redis loss.
 *
 * - `workflows`: the definition (`steps` as validated JSON), `wait_event_names` (the WAIT_FOR_EVENT event
 *   names of its steps, which the track hook needs to know cheaply), the sealed webhook secret, and a soft
 *   delete (DELETE cancels the running executions and hides the workflow with them).
 * - `workflow_executions`: one run for one contact. Re-entry is enforced by the unique `once_key` (the
 *   contact id when the workflow did not allow re-entry) and a NOT EXISTS in the start statement; the
 *   unique (workflow, trigger event) makes starting from one event idempotent (the sweep's catch-up).
 * - `workflow_execution_steps`: one row per visit of a step (`seq` 1, 2, ...), claimed by an UPDATE
 *   before its effect: the gate that makes each visit run at most once.
 * - `emails` gains the (execution, step visit) that created a row, unique, so a retried SEND_EMAIL cannot
 *   write a second email.
 */
export class Workflows1763920000000 implements MigrationInterface {
  name = 'Workflows1763920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE workflows (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        event_name text NOT NULL,
        enabled boolean NOT NULL DEFAULT false,
        allow_reentry boolean NOT NULL DEFAULT false,
        steps jsonb NOT NULL,
        wait_event_names text[] NOT NULL DEFAULT '{}',
        webhook_secret text NOT NULL,
        enabled_at timestamptz,
        deleted_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT workflows_steps_is_array CHECK (jsonb_typeof(steps) = 'array')
      )`);
    await q.query(`CREATE INDEX workflows_project_id_idx ON workflows (project_id, id) WHERE deleted_at IS NULL`);
    // The start statement's join: enabled workflows of a project by trigger event name.
    await q.query(`CREATE INDEX workflows_trigger_idx ON workflows (project_id, event_name) WHERE enabled AND deleted_at IS NULL`);

    // No FK to projects on the two execution tables: the workflow's FK already ties them to the project, and
    // a second FK would make every start take a lock on the one projects row all of a project's requests share.
    await q.query(`
      CREATE TABLE workflow_executions (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL,
        workflow_id uuid NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        contact_id uuid NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
        trigger_event_id uuid,
        once_key uuid,
        status text NOT NULL DEFAULT 'RUNNING'
          CHECK (status IN ('RUNNING', 'WAITING', 'COMPLETED', 'EXITED', 'FAILED', 'CANCELLED')),
        current_step_id text,
        step_count integer NOT NULL DEFAULT 1,
        error text,
        started_at timestamptz NOT NULL DEFAULT now(),
        completed_at timestamptz,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE UNIQUE INDEX workflow_executions_trigger_uq ON workflow_executions (workflow_id, trigger_event_id)`);
    await q.query(`CREATE UNIQUE INDEX workflow_executions_once_uq ON workflow_executions (workflow_id, once_key)`);
    // Re-entry check (has this contact run this workflow?) and the executions of a deleted contact.
    await q.query(`CREATE INDEX workflow_executions_contact_idx ON workflow_executions (contact_id, workflow_id)`);
    // GET /workflows/{id}/executions, with and without ?status=, newest first.
    await q.query(`CREATE INDEX workflow_executions_list_idx ON workflow_executions (project_id, workflow_id, id)`);
    await q.query(`CREATE INDEX workflow_executions_status_idx ON workflow_executions (project_id, workflow_id, status, id)`);

    await q.query(`
      CREATE TABLE workflow_execution_steps (
        id uuid PRIMARY KEY DEFAULT uuid_generate_v7(),
        project_id uuid NOT NULL,
        execution_id uuid NOT NULL REFERENCES workflow_executions(id) ON DELETE CASCADE,
        contact_id uuid NOT NULL,
        seq integer NOT NULL,
        step_id text NOT NULL,
        type text NOT NULL,
        status text NOT NULL DEFAULT 'PENDING'
          CHECK (status IN ('PENDING', 'RUNNING', 'WAITING', 'COMPLETED', 'SKIPPED', 'FAILED', 'CANCELLED')),
        attempts integer NOT NULL DEFAULT 0,
        due_at timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz,
        wait_event_name text,
        resumed_event_id uuid,
        outcome jsonb,
        error text,
        started_at timestamptz,
        completed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT workflow_execution_steps_seq_uq UNIQUE (execution_id, seq)
      )`);
    // The sweep: unfinished step rows by when they are due.
    await q.query(`
      CREATE INDEX workflow_execution_steps_due_idx ON workflow_execution_steps (due_at, id)
       WHERE status IN ('PENDING', 'RUNNING', 'WAITING')`);
    // The track hook: WAIT_FOR_EVENT steps waiting for this contact and event name.
    await q.query(`
      CREATE INDEX workflow_execution_steps_waiting_idx ON workflow_execution_steps (project_id, contact_id, wait_event_name)
       WHERE status = 'WAITING' AND wait_event_name IS NOT NULL`);

    await q.query(`ALTER TABLE emails ADD COLUMN workflow_execution_id uuid, ADD COLUMN workflow_step_seq integer`);
    await q.query(`
      CREATE UNIQUE INDEX emails_workflow_step_uq ON emails (workflow_execution_id, workflow_step_seq)
       WHERE workflow_execution_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX emails_workflow_step_uq`);
    await q.query(`ALTER TABLE emails DROP COLUMN workflow_step_seq, DROP COLUMN workflow_execution_id`);
    await q.query(`DROP TABLE workflow_execution_steps`);
    await q.query(`DROP TABLE workflow_executions`);
    await q.query(`DROP TABLE workflows`);
  }
}
