import { Injectable } from '@nestjs/common';
import { queryPrepared, SqlWhere, type Db } from '@app/service-kit';
import { keysetPage } from '../../core/database/keyset-page.js';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { ExecutionStatus } from './workflow-definition.js';

/** The first row of a named prepared statement (fixed texts only), or null. */
async function preparedOne<Row>(db: Db, sql: string, params: readonly unknown[]): Promise<Row | null> {
  return (await queryPrepared<Row>(db, sql, params))[0] ?? null;
}

/** One event that may start executions (or resume waits): tracked, or one of the service's own. */
export interface TriggerEvent {
  id: string;
  projectId: string;
  name: string;
}

/** A step row made due (first step of a new execution, or the next one): its job is queued after commit. */
export interface DueStep {
  stepRowId: string;
  executionId: string;
  projectId: string;
}

export interface ExecutionRow {
  id: string;
  workflow_id: string;
  contact_id: string;
  status: ExecutionStatus;
  current_step_id: string | null;
  started_at: Date;
  completed_at: Date | null;
}

const EXECUTION_COLUMNS = 'id, workflow_id, contact_id, status, current_step_id, started_at, completed_at';

/** A UUID in text (what `data.emailId` of an `email.*` event holds), for a cast that cannot fail. */
const UUID_TEXT = `'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'`;

/** The email an `email.*` event row `e` is about (its `data.emailId`), or null. */
const emailIdOf = (e: string) => `CASE WHEN ${e}.data ->> 'emailId' ~* ${UUID_TEXT} THEN (${e}.data ->> 'emailId')::uuid END`;

/**
 * Advisory lock space of the run cap: one transaction-level lock per (workflow, contact) that may start a
 * re-entrant execution, so concurrent starts for one contact count each other's executions. Two-key
 * locks (this space, a hash) never meet the one-key locks elsewhere (migrations, bootstrap, key sealing).
 */
const RUN_CAP_LOCK_SPACE = 727_401;

/**
 * Step 1 of a start (its own statement, in the start's transaction): locks every (workflow, contact) of
 * events $1 whose workflow allows re-entry, in hash order (so concurrent starts cannot deadlock). A
 * statement reads what committed before it began: the count in step 2 must come after the lock, in a
 * statement of its own, to see the executions of the transaction that held it. A hash collision only
 * makes two pairs wait for each other.
 */
const LOCK_RUN_COUNTERS = `
  SELECT pg_advisory_xact_lock(${RUN_CAP_LOCK_SPACE}, k.key)
    FROM (SELECT DISTINCT hashtext(w.id::text || e.contact_id::text) AS key
            FROM events e
            JOIN workflows w ON w.project_id = e.project_id AND w.event_name = e.name AND w.enabled AND w.deleted_at IS NULL
           WHERE e.id = ANY($1::uuid[]) AND w.allow_reentry
           ORDER BY 1) k`;

/**
 * Step 2: starts executions, set-based, for events $1: every enabled workflow of the event's project
 * whose trigger is the event's name, except
 *
 * - the workflow whose execution sent the email an `email.*` event is about (`emails.workflow_id`): a
 *   workflow's own emails never start it again (another workflow may react to them);
 * - without re-entry, a contact that already has an execution of it: the NOT EXISTS decides the common
 *   case, the unique (workflow, once_key) races;
 * - with re-entry, starts past $2 (MAIL_WORKFLOW_MAX_RUNS_PER_DAY) for the contact in 24 h: executions
 *   started since (index workflow_executions_runs_idx), plus this statement's earlier events for the
 *   pair (`nth`, in event order). Exact because step 1 holds the pair's lock until commit. Those are
 *   answered as `skipped` (per workflow and contact), not started.
 *
 * An event that already started the workflow is left out (the unique (workflow, trigger event) makes a
 * repeated start a no-op; leaving it out keeps it from taking a place under the cap). Rows go in
 * (workflow, contact) order so concurrent starts take index locks in one order. The statement also
 * writes each new execution's first step row (`workflow_execution_steps`, whose writer is
 * WorkflowStepsRepository): an execution and its first step are one fact.
 */
const START_FROM_EVENTS = `
  WITH ev AS (
    SELECT e.id, e.project_id, e.contact_id, e.name, em.workflow_id AS origin_workflow_id
      FROM events e
      LEFT JOIN emails em ON e.name LIKE 'email.%' AND em.project_id = e.project_id AND em.id = ${emailIdOf('e')}
     WHERE e.id = ANY($1::uuid[])
  ),
  candidate AS (
    SELECT w.project_id, w.id AS workflow_id, w.allow_reentry, w.steps -> 0 ->> 'id' AS first_step_id, ev.contact_id, ev.id AS event_id,
           row_number() OVER (PARTITION BY w.id, ev.contact_id ORDER BY ev.id) AS nth
      FROM ev
      JOIN workflows w ON w.project_id = ev.project_id AND w.event_name = ev.name AND w.enabled AND w.deleted_at IS NULL
     WHERE w.id IS DISTINCT FROM ev.origin_workflow_id
       AND NOT EXISTS (SELECT 1 FROM workflow_executions s WHERE s.workflow_id = w.id AND s.trigger_event_id = ev.id)
       AND (w.allow_reentry
            OR NOT EXISTS (SELECT 1 FROM workflow_executions p WHERE p.contact_id = ev.contact_id AND p.workflow_id = w.id))
  ),
  judged AS (
    SELECT c.*,
           NOT c.allow_reentry
           OR c.nth + (SELECT count(*) FROM workflow_executions r
                        WHERE r.project_id = c.project_id AND r.workflow_id = c.workflow_id AND r.contact_id = c.contact_id
                          AND r.started_at > now() - interval '24 hours') <= $2::int AS allowed
      FROM candidate c
  ),
  started AS (
    INSERT INTO workflow_executions AS x (project_id, workflow_id, contact_id, trigger_event_id, once_key, current_step_id)
    SELECT j.project_id, j.workflow_id, j.contact_id, j.event_id, CASE WHEN j.allow_reentry THEN NULL ELSE j.contact_id END, j.first_step_id
      FROM judged j
     WHERE j.allowed
     ORDER BY j.workflow_id, j.contact_id, j.event_id
    ON CONFLICT DO NOTHING
    RETURNING x.id, x.project_id, x.contact_id, x.workflow_id, x.current_step_id
  ),
  first_step AS (
    INSERT INTO workflow_execution_steps (project_id, execution_id, contact_id, seq, step_id, type)
    SELECT s.project_id, s.id, s.contact_id, 1, s.current_step_id, w.steps -> 0 ->> 'type'
      FROM started s JOIN workflows w ON w.id = s.workflow_id
    RETURNING id, execution_id, project_id
  ),
  skipped AS (
    SELECT project_id, workflow_id, contact_id, count(*)::int AS triggers FROM judged WHERE NOT allowed GROUP BY 1, 2, 3
  )
  SELECT
    (SELECT coalesce(json_agg(json_build_object('stepRowId', id, 'executionId', execution_id, 'projectId', project_id)), '[]')
       FROM first_step) AS started,
    (SELECT coalesce(json_agg(json_build_object('projectId', project_id, 'workflowId', workflow_id, 'contactId', contact_id,
                                                'triggers', triggers)), '[]')
       FROM skipped) AS skipped`;

/**
 * The sweep's catch-up: events since $1 (a UUIDv7 floor: the events index is by id) and older than
 * $2 seconds that should have started an execution and did not (the process died between the event's
 * commit and the hook, or a stale trigger cache skipped them). At most $3 (workflow, event) pairs a run.
 * The start statement decides again; what it would leave out for good (the workflow's own email, a
 * contact at the run cap $4) is not picked, so the sweep does not pick it again every run.
 */
const MISSED_START_EVENTS = `
  SELECT DISTINCT e.id
    FROM (
      SELECT e.id
        FROM workflows w
        JOIN events e ON e.project_id = w.project_id AND e.name = w.event_name AND e.id >= $1::uuid
       WHERE w.enabled AND w.deleted_at IS NULL
         AND e.created_at >= w.enabled_at AND e.created_at < now() - make_interval(secs => $2)
         AND NOT EXISTS (SELECT 1 FROM workflow_executions x WHERE x.workflow_id = w.id AND x.trigger_event_id = e.id)
         AND NOT (e.name LIKE 'email.%'
                  AND EXISTS (SELECT 1 FROM emails em WHERE em.project_id = e.project_id AND em.id = ${emailIdOf('e')} AND em.workflow_id = w.id))
         AND (CASE WHEN w.allow_reentry
                   THEN (SELECT count(*) FROM workflow_executions r
                          WHERE r.project_id = w.project_id AND r.workflow_id = w.id AND r.contact_id = e.contact_id
                            AND r.started_at > now() - interval '24 hours') < $4::int
                   ELSE NOT EXISTS (SELECT 1 FROM workflow_executions p WHERE p.contact_id = e.contact_id AND p.workflow_id = w.id)
              END)
       LIMIT $3
    ) e`;

/** Triggers a start left out because the contact reached the run cap, per workflow and contact. */
export interface SkippedStarts {
  projectId: string;
  workflowId: string;
  contactId: string;
  triggers: number;
}

export interface StartResult {
  started: DueStep[];
  skipped: SkippedStarts[];
}

/** The smallest UUIDv7 of a millisecond: a keyset floor for tables whose ids are UUIDv7. */
export function uuidV7Floor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * The one writer of `workflow_executions` (and, in the start statement only, of the first step row;
 * see START_FROM_EVENTS). Runner statements are fenced by the execution's status: a CANCELLED, FAILED or
 * finished execution never moves again.
 */
@Injectable()
export class WorkflowExecutionsRepository {
  /**
   * Step 1 of a start from events of any projects (each row carries its project): the run-cap locks.
   * `tx` must be the transaction step 2 runs in.
   */
  async lockRunCounters(tx: Db, eventIds: readonly string[]): Promise<void> {
    await queryPrepared(tx, LOCK_RUN_COUNTERS, [eventIds]);
  }

  /** Step 2: the executions events call for (a /v1/track batch, system events, the sweep's catch-up). */
  async startForEvents(tx: Db, input: { eventIds: readonly string[]; maxRunsPerDay: number }): Promise<StartResult> {
    const [row] = await queryPrepared<StartResult>(tx, START_FROM_EVENTS, [input.eventIds, input.maxRunsPerDay]);
    return row;
  }

  /** The events of the sweep's catch-up of starts the hook missed, across projects. */
  async missedStartEvents(db: Db, input: { since: Date; settleSeconds: number; limit: number; maxRunsPerDay: number }): Promise<string[]> {
    const rows = await queryPrepared<{ id: string }>(db, MISSED_START_EVENTS, [
      uuidV7Floor(input.since),
      input.settleSeconds,
      input.limit,
      input.maxRunsPerDay,
    ]);
    return rows.map((r) => r.id);
  }

  /** The execution moves on to `stepId` (one more visit); null when it is no longer RUNNING or WAITING. */
  advance(db: Db, scope: ProjectScope, input: { id: string; stepId: string }): Promise<{ step_count: number } | null> {
    return preparedOne<{ step_count: number }>(
      db,
      `UPDATE workflow_executions SET current_step_id = $3, status = 'RUNNING', step_count = step_count + 1, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('RUNNING', 'WAITING')
        RETURNING step_count`,
      [scope.projectId, input.id, input.stepId],
    );
  }

  /** RUNNING while a step runs, WAITING while a DELAY or WAIT_FOR_EVENT holds it. */
  async setActiveStatus(db: Db, scope: ProjectScope, input: { id: string; status: 'RUNNING' | 'WAITING' }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_executions SET status = $3, updated_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('RUNNING', 'WAITING') RETURNING id`,
      [scope.projectId, input.id, input.status],
    );
    return rows.length > 0;
  }

  /** COMPLETED, EXITED or FAILED (the failing step stays current; otherwise there is none). */
  async finish(
    db: Db,
    scope: ProjectScope,
    input: { id: string; status: 'COMPLETED' | 'EXITED' | 'FAILED'; error?: string },
  ): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_executions
          SET status = $3, error = $4, completed_at = now(), updated_at = now(),
              current_step_id = CASE WHEN $3 = 'FAILED' THEN current_step_id END
        WHERE project_id = $1 AND id = $2 AND status IN ('RUNNING', 'WAITING') RETURNING id`,
      [scope.projectId, input.id, input.status, input.error?.slice(0, 1000) ?? null],
    );
    return rows.length > 0;
  }

  /** DELETE of the workflow: its running and waiting executions end CANCELLED (after their steps). */
  async cancelForWorkflow(db: Db, scope: ProjectScope, workflowId: string): Promise<number> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_executions SET status = 'CANCELLED', completed_at = now(), current_step_id = NULL, updated_at = now()
        WHERE project_id = $1 AND workflow_id = $2 AND status IN ('RUNNING', 'WAITING') RETURNING id`,
      [scope.projectId, workflowId],
    );
    return rows.length;
  }

  /** One page of a workflow's executions (newest first) and the total matching the filter. */
  list(
    db: Db,
    scope: ProjectScope,
    filter: { workflowId: string; status?: ExecutionStatus; beforeId?: string; limit: number },
  ): Promise<{ rows: ExecutionRow[]; total: number }> {
    const where = new SqlWhere().add('project_id = ?', scope.projectId).add('workflow_id = ?', filter.workflowId);
    if (filter.status) where.add('status = ?', filter.status);
    const page = { filter: where, beforeId: filter.beforeId, limit: filter.limit };
    return keysetPage<ExecutionRow>(db, { select: EXECUTION_COLUMNS, from: 'workflow_executions', idColumn: 'id', ...page });
  }
}
