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

/**
 * Starting executions, set-based, from a source of event rows `ev(id, project_id, contact_id, name)`:
 * every enabled workflow of the event's project whose trigger is the event's name,
 * unless the contact already has an execution of it and it does not allow re-entry. The NOT EXISTS
 * decides the common case; the unique indexes (workflow, once_key) and (workflow, trigger event) decide
 * races and make a repeated start from the same event a no-op. Rows go in (workflow, contact) order so
 * concurrent starts take index locks in one order.
 *
 * The statement also writes each new execution's first step row (`workflow_execution_steps`, whose
 * writer is WorkflowStepsRepository): an execution and its first step are one fact, and one statement
 * keeps the /v1/track hook to one round trip per batch.
 */
function startSql(source: string): string {
  return `
  WITH ev AS (${source}),
  started AS (
    INSERT INTO workflow_executions AS x (project_id, workflow_id, contact_id, trigger_event_id, once_key, current_step_id)
    SELECT w.project_id, w.id, ev.contact_id, ev.id,
           CASE WHEN w.allow_reentry THEN NULL ELSE ev.contact_id END,
           w.steps -> 0 ->> 'id'
      FROM ev
      JOIN workflows w ON w.project_id = ev.project_id AND w.event_name = ev.name AND w.enabled AND w.deleted_at IS NULL
     WHERE w.allow_reentry
        OR NOT EXISTS (SELECT 1 FROM workflow_executions p WHERE p.contact_id = ev.contact_id AND p.workflow_id = w.id)
     ORDER BY w.id, ev.contact_id, ev.id
    ON CONFLICT DO NOTHING
    RETURNING x.id, x.project_id, x.contact_id, x.workflow_id, x.current_step_id
  ),
  first_step AS (
    INSERT INTO workflow_execution_steps (project_id, execution_id, contact_id, seq, step_id, type)
    SELECT s.project_id, s.id, s.contact_id, 1, s.current_step_id, w.steps -> 0 ->> 'type'
      FROM started s JOIN workflows w ON w.id = s.workflow_id
    RETURNING id, execution_id, project_id
  )
  SELECT id AS "stepRowId", execution_id AS "executionId", project_id AS "projectId" FROM first_step`;
}

/** Events by id ($1): a /v1/track batch's, or system events inserted in the caller's transaction. */
const START_FROM_EVENTS = startSql(`
  SELECT e.id, e.project_id, e.contact_id, e.name FROM events e WHERE e.id = ANY($1::uuid[])`);

/**
 * The sweep's catch-up: events since $1 (a UUIDv7 floor: the events index is by id) and older than
 * $2 seconds that should have started an execution and did not (the process died between the event's
 * commit and the hook, or a stale trigger cache skipped them). At most $3 (workflow, event) pairs a run.
 */
const START_MISSED = startSql(`
  SELECT DISTINCT e.id, e.project_id, e.contact_id, e.name
    FROM (
      SELECT e.id, e.project_id, e.contact_id, e.name
        FROM workflows w
        JOIN events e ON e.project_id = w.project_id AND e.name = w.event_name AND e.id >= $1::uuid
       WHERE w.enabled AND w.deleted_at IS NULL
         AND e.created_at >= w.enabled_at AND e.created_at < now() - make_interval(secs => $2)
         AND NOT EXISTS (SELECT 1 FROM workflow_executions x WHERE x.workflow_id = w.id AND x.trigger_event_id = e.id)
         AND (w.allow_reentry
              OR NOT EXISTS (SELECT 1 FROM workflow_executions p WHERE p.contact_id = e.contact_id AND p.workflow_id = w.id))
       LIMIT $3
    ) e`);

/** The smallest UUIDv7 of a millisecond: a keyset floor for tables whose ids are UUIDv7. */
export function uuidV7Floor(at: Date): string {
  const hex = Math.max(0, at.getTime()).toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-0000-0000-000000000000`;
}

/**
 * The one writer of `workflow_executions` (and, in the start statement only, of the first step row;
 * see startSql). Runner statements are fenced by the execution's status: a CANCELLED, FAILED or
 * finished execution never moves again.
 */
@Injectable()
export class WorkflowExecutionsRepository {
  /** Events of any projects by id (each row carries its project): a /v1/track batch or a system-event insert. */
  startForEvents(db: Db, eventIds: readonly string[]): Promise<DueStep[]> {
    return queryPrepared<DueStep>(db, START_FROM_EVENTS, [eventIds]);
  }

  /** The sweep's catch-up of starts the hook missed, across projects. */
  startMissed(db: Db, input: { since: Date; settleSeconds: number; limit: number }): Promise<DueStep[]> {
    return queryPrepared<DueStep>(db, START_MISSED, [uuidV7Floor(input.since), input.settleSeconds, input.limit]);
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
