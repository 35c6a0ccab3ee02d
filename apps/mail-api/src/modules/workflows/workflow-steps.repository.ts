import { Injectable } from '@nestjs/common';
import { query, queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { compileFilter, type SegmentFilter } from '../segments/segment-condition.js';
import type { ExecutionStatus, StepStatus, WorkflowStep, WorkflowStepType } from './workflow-definition.js';
import type { DueStep } from './workflow-executions.repository.js';

/** The first row of a named prepared statement (fixed texts only), or null. */
async function preparedOne<Row>(db: Db, sql: string, params: readonly unknown[]): Promise<Row | null> {
  return (await queryPrepared<Row>(db, sql, params))[0] ?? null;
}

/** Everything the runner needs to run one step visit, read in one statement. */
export interface StepContextRow {
  id: string;
  execution_id: string;
  seq: number;
  step_id: string;
  type: WorkflowStepType;
  status: StepStatus;
  attempts: number;
  /** Whether `due_at` has passed, by the database's clock (the one every due_at is written with). */
  is_due: boolean;
  due_at: Date;
  claim_lapsed: boolean;
  started_at: Date | null;
  wait_event_name: string | null;
  resumed_event_id: string | null;
  execution_status: ExecutionStatus;
  workflow_id: string;
  contact_id: string;
  /** The event that started the execution (read from `events`; null if it is gone). */
  trigger_event_id: string | null;
  trigger_name: string | null;
  trigger_data: Record<string, unknown> | null;
  trigger_at: Date | null;
  step_count: number;
  workflow_steps: WorkflowStep[];
  webhook_secret: string;
  contact_email: string | null;
  contact_subscribed: boolean | null;
  contact_data: Record<string, unknown> | null;
}

/** A step row whose job should exist now (the sweep re-adds it). */
export interface SweptStep {
  id: string;
  execution_id: string;
  project_id: string;
  status: StepStatus;
  attempts: number;
  resumed: boolean;
  /** Text: the keyset needs Postgres's microseconds. */
  due_at: string;
}

export interface StepHistoryRow {
  execution_id: string;
  step_id: string;
  status: StepStatus;
  started_at: Date | null;
  completed_at: Date | null;
  error: string | null;
}

/** Resumes WAIT_FOR_EVENT steps waiting for these events' (project, contact, name), events by id $1. */
const RESUME_WAITING = `
  WITH ev AS (SELECT e.id, e.project_id, e.contact_id, e.name, e.created_at FROM events e WHERE e.id = ANY($1::uuid[]))
  UPDATE workflow_execution_steps s SET resumed_event_id = ev.id, due_at = now()
    FROM ev
   WHERE s.status = 'WAITING' AND s.wait_event_name = ev.name AND s.project_id = ev.project_id AND s.contact_id = ev.contact_id
     AND s.resumed_event_id IS NULL AND ev.created_at >= s.started_at
  RETURNING s.id AS "stepRowId", s.execution_id AS "executionId", s.project_id AS "projectId"`;

/**
 * The one writer of `workflow_execution_steps` (an execution's first row is written by the start
 * statement in WorkflowExecutionsRepository, which says why). Every change of a row is a compare-and-set
 * on its status (and attempt): the claim that makes each visit run at most once.
 */
@Injectable()
export class WorkflowStepsRepository {
  context(db: Db, scope: ProjectScope, id: string): Promise<StepContextRow | null> {
    return preparedOne<StepContextRow>(
      db,
      `SELECT s.id, s.execution_id, s.seq, s.step_id, s.type, s.status, s.attempts, s.due_at, s.started_at, s.wait_event_name,
              s.resumed_event_id, s.due_at <= now() AS is_due, coalesce(s.claimed_until < now(), true) AS claim_lapsed,
              x.status AS execution_status, x.workflow_id, x.contact_id, x.step_count,
              x.trigger_event_id, ev.name AS trigger_name, ev.data AS trigger_data, ev.created_at AS trigger_at,
              w.steps AS workflow_steps, w.webhook_secret,
              c.email AS contact_email, c.subscribed AS contact_subscribed, c.data AS contact_data
         FROM workflow_execution_steps s
         JOIN workflow_executions x ON x.id = s.execution_id AND x.project_id = s.project_id
         JOIN workflows w ON w.id = x.workflow_id AND w.project_id = x.project_id
         LEFT JOIN contacts c ON c.id = x.contact_id AND c.project_id = x.project_id
         LEFT JOIN events ev ON ev.id = x.trigger_event_id AND ev.project_id = x.project_id
        WHERE s.project_id = $1 AND s.id = $2`,
      [scope.projectId, id],
    );
  }

  /** PENDING -> RUNNING inside the transaction of the step's effect; false when another run has it. */
  async claim(db: Db, scope: ProjectScope, id: string): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps SET status = 'RUNNING', attempts = attempts + 1, started_at = now()
        WHERE project_id = $1 AND id = $2 AND status = 'PENDING' AND due_at <= now() RETURNING id`,
      [scope.projectId, id],
    );
    return rows.length > 0;
  }

  /**
   * A WEBHOOK attempt, committed before the request goes out: PENDING (due) or RUNNING with a lapsed claim
   * (its worker died mid-request) -> RUNNING, attempts + 1, claimed for `lockMs`. Null when not claimable.
   */
  claimAttempt(
    db: Db,
    scope: ProjectScope,
    input: { id: string; lockMs: number; maxAttempts: number },
  ): Promise<{ attempts: number } | null> {
    return preparedOne<{ attempts: number }>(
      db,
      `UPDATE workflow_execution_steps
          SET status = 'RUNNING', attempts = attempts + 1, started_at = coalesce(started_at, now()),
              claimed_until = now() + make_interval(secs => $3::double precision / 1000)
        WHERE project_id = $1 AND id = $2 AND attempts < $4
          AND ((status = 'PENDING' AND due_at <= now()) OR (status = 'RUNNING' AND claimed_until < now()))
        RETURNING attempts`,
      [scope.projectId, input.id, input.lockMs, input.maxAttempts],
    );
  }

  /** A failed WEBHOOK attempt gives the row back, due again after the backoff. */
  async release(db: Db, scope: ProjectScope, input: { id: string; attempts: number; delayMs: number; error: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps
          SET status = 'PENDING', claimed_until = NULL, error = $5,
              due_at = now() + make_interval(secs => $4::double precision / 1000)
        WHERE project_id = $1 AND id = $2 AND status = 'RUNNING' AND attempts = $3 RETURNING id`,
      [scope.projectId, input.id, input.attempts, input.delayMs, input.error.slice(0, 1000)],
    );
    return rows.length > 0;
  }

  /** PENDING -> WAITING until `seconds` from now (DELAY), or the event (WAIT_FOR_EVENT). Null when not PENDING. */
  startWait(
    db: Db,
    scope: ProjectScope,
    input: { id: string; seconds: number; waitEventName: string | null },
  ): Promise<{ due_at: Date; started_at: Date } | null> {
    return preparedOne<{ due_at: Date; started_at: Date }>(
      db,
      `UPDATE workflow_execution_steps
          SET status = 'WAITING', attempts = attempts + 1, started_at = now(), wait_event_name = $4,
              due_at = now() + make_interval(secs => $3)
        WHERE project_id = $1 AND id = $2 AND status = 'PENDING' AND due_at <= now()
        RETURNING due_at, started_at`,
      [scope.projectId, input.id, input.seconds, input.waitEventName],
    );
  }

  /** WAITING -> COMPLETED once resumed by its event or due; null when it is neither (or no longer WAITING). */
  endWait(db: Db, scope: ProjectScope, id: string): Promise<{ resumed_event_id: string | null } | null> {
    return preparedOne<{ resumed_event_id: string | null }>(
      db,
      `UPDATE workflow_execution_steps SET status = 'COMPLETED', completed_at = now()
        WHERE project_id = $1 AND id = $2 AND status = 'WAITING' AND (resumed_event_id IS NOT NULL OR due_at <= now())
        RETURNING resumed_event_id`,
      [scope.projectId, id],
    );
  }

  /** RUNNING -> COMPLETED / SKIPPED / FAILED, with what it did; `attempts` fences a WEBHOOK attempt. */
  async finish(
    db: Db,
    scope: ProjectScope,
    input: { id: string; status: 'COMPLETED' | 'SKIPPED' | 'FAILED'; outcome?: unknown; error?: string | null; attempts?: number },
  ): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps
          SET status = $3, outcome = $4::jsonb, error = $5, claimed_until = NULL, completed_at = now()
        WHERE project_id = $1 AND id = $2 AND status = 'RUNNING' AND ($6::int IS NULL OR attempts = $6) RETURNING id`,
      [
        scope.projectId,
        input.id,
        input.status,
        input.outcome === undefined ? null : JSON.stringify(input.outcome),
        input.error?.slice(0, 1000) ?? null,
        input.attempts ?? null,
      ],
    );
    return rows.length > 0;
  }

  /** A step that cannot run (its definition is gone, the workflow was edited) ends FAILED from any open state. */
  async failOpen(db: Db, scope: ProjectScope, input: { id: string; error: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps SET status = 'FAILED', error = $3, claimed_until = NULL, completed_at = now()
        WHERE project_id = $1 AND id = $2 AND status IN ('PENDING', 'RUNNING', 'WAITING') RETURNING id`,
      [scope.projectId, input.id, input.error.slice(0, 1000)],
    );
    return rows.length > 0;
  }

  /** The next visit's row, PENDING and due now. */
  async insertNext(
    db: Db,
    scope: ProjectScope,
    input: { executionId: string; contactId: string; seq: number; step: WorkflowStep },
  ): Promise<DueStep> {
    const [row] = await queryPrepared<DueStep>(
      db,
      `INSERT INTO workflow_execution_steps (project_id, execution_id, contact_id, seq, step_id, type)
       VALUES ($1, $2, $3, $4, $5, $6)
       RETURNING id AS "stepRowId", execution_id AS "executionId", project_id AS "projectId"`,
      [scope.projectId, input.executionId, input.contactId, input.seq, input.step.id, input.step.type],
    );
    return row;
  }

  /** Events (by id, of any projects) resume the waits they answer. */
  resumeWaiting(db: Db, eventIds: readonly string[]): Promise<DueStep[]> {
    return queryPrepared<DueStep>(db, RESUME_WAITING, [eventIds]);
  }

  /**
   * The sweep's catch-up of resumes: WAIT_FOR_EVENT steps that started within `windowSeconds` and have a
   * matching event since they started that did not resume them (it committed while the wait was being
   * written, or its hook never ran). Reads `events` by contact.
   */
  resumeMissed(db: Db, input: { windowSeconds: number; limit: number }): Promise<DueStep[]> {
    return queryPrepared<DueStep>(
      db,
      `UPDATE workflow_execution_steps s SET resumed_event_id = m.event_id, due_at = now()
         FROM (
           SELECT s.id, (SELECT e.id FROM events e
                          WHERE e.contact_id = s.contact_id AND e.project_id = s.project_id AND e.name = s.wait_event_name
                            AND e.created_at >= s.started_at
                          ORDER BY e.id LIMIT 1) AS event_id
             FROM workflow_execution_steps s
            WHERE s.status = 'WAITING' AND s.wait_event_name IS NOT NULL AND s.resumed_event_id IS NULL
              AND s.started_at > now() - make_interval(secs => $1)
            LIMIT $2
         ) m
        WHERE s.id = m.id AND m.event_id IS NOT NULL AND s.status = 'WAITING' AND s.resumed_event_id IS NULL
        RETURNING s.id AS "stepRowId", s.execution_id AS "executionId", s.project_id AS "projectId"`,
      [input.windowSeconds, input.limit],
    );
  }

  /** Resumes one WAITING step by an event found after the wait was written (the race the hook cannot see). */
  async markResumed(db: Db, scope: ProjectScope, input: { id: string; eventId: string }): Promise<boolean> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps SET resumed_event_id = $3, due_at = now()
        WHERE project_id = $1 AND id = $2 AND status = 'WAITING' AND resumed_event_id IS NULL RETURNING id`,
      [scope.projectId, input.id, input.eventId],
    );
    return rows.length > 0;
  }

  /**
   * A CONDITION on the contact: the segment filter compiled to SQL (segments/segment-condition.ts), one
   * EXISTS over the contact's row (and its events, for `event.<name>` fields).
   */
  async conditionHolds(db: Db, scope: ProjectScope, input: { contactId: string; filter: SegmentFilter }): Promise<boolean> {
    const params: unknown[] = [scope.projectId, input.contactId];
    const predicate = compileFilter(input.filter, 'c', params);
    const [row] = await query<{ holds: boolean }>(
      db,
      `SELECT EXISTS (SELECT 1 FROM contacts c WHERE c.project_id = $1 AND c.id = $2 AND ${predicate}) AS holds`,
      params,
    );
    return row.holds;
  }

  /** An event matching a wait between its start and its timeout (read at timeout: an unseen event wins over the timeout). */
  async eventSince(
    db: Db,
    scope: ProjectScope,
    input: { contactId: string; name: string; since: Date; until: Date },
  ): Promise<string | null> {
    const row = await preparedOne<{ id: string }>(
      db,
      `SELECT id FROM events
        WHERE project_id = $1 AND contact_id = $2 AND name = $3 AND created_at >= $4 AND created_at <= $5
        ORDER BY id LIMIT 1`,
      [scope.projectId, input.contactId, input.name, input.since, input.until],
    );
    return row?.id ?? null;
  }

  /**
   * A page of unfinished step rows that should have a job now, across projects, keyset by (due_at, id):
   * PENDING or WAITING rows due for more than `graceSeconds`, or resumed by an event, and RUNNING rows
   * whose claim lapsed (their worker died mid-attempt).
   */
  due(db: Db, input: { graceSeconds: number; after: { dueAt: string; id: string } | null; limit: number }): Promise<SweptStep[]> {
    return queryPrepared<SweptStep>(
      db,
      `SELECT id, execution_id, project_id, status, attempts, resumed_event_id IS NOT NULL AS resumed, due_at::text AS due_at
         FROM workflow_execution_steps
        WHERE status IN ('PENDING', 'RUNNING', 'WAITING')
          AND (due_at, id) > ($2::timestamptz, $3::uuid)
          AND due_at < now() - make_interval(secs => $1)
          AND (status <> 'RUNNING' OR claimed_until < now())
        ORDER BY due_at, id
        LIMIT $4`,
      [input.graceSeconds, input.after?.dueAt ?? '-infinity', input.after?.id ?? '00000000-0000-0000-0000-000000000000', input.limit],
    );
  }

  /** DELETE of the workflow: the open steps of its running executions end CANCELLED (before the executions). */
  async cancelForWorkflow(db: Db, scope: ProjectScope, workflowId: string): Promise<number> {
    const rows = await queryPrepared(
      db,
      `UPDATE workflow_execution_steps s SET status = 'CANCELLED', claimed_until = NULL, completed_at = now()
         FROM workflow_executions x
        WHERE x.id = s.execution_id AND x.project_id = $1 AND x.workflow_id = $2 AND x.status IN ('RUNNING', 'WAITING')
          AND s.project_id = $1 AND s.status IN ('PENDING', 'RUNNING', 'WAITING')
        RETURNING s.id`,
      [scope.projectId, workflowId],
    );
    return rows.length;
  }

  /** The step history of a page of executions, in visit order. */
  history(db: Db, scope: ProjectScope, executionIds: string[]): Promise<StepHistoryRow[]> {
    if (executionIds.length === 0) return Promise.resolve([]);
    return queryPrepared<StepHistoryRow>(
      db,
      `SELECT execution_id, step_id, status, started_at, completed_at, error FROM workflow_execution_steps
        WHERE project_id = $1 AND execution_id = ANY($2::uuid[]) ORDER BY execution_id, seq`,
      [scope.projectId, executionIds],
    );
  }
}
