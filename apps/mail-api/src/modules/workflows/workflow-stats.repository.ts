import { Injectable } from '@nestjs/common';
import { queryPrepared, type Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import type { ExecutionStatus } from './workflow-definition.js';

/** The counts of one step of a workflow, over every visit of it by its executions. */
export interface StepStatsRow {
  stepId: string;
  type: string;
  entered: number;
  completed: number;
  failed: number;
  waiting: number;
  emailsSent: number;
  opened: number;
  clicked: number;
}

/**
 * GET /workflows/{id}/stats: reads of the executions, their step visits and the emails the visits
 * wrote (a person's opens and clicks only: `opened_at` / `clicked_at`). Each statement starts from the
 * workflow's executions (workflow_executions_status_idx, workflow_executions_list_idx), then probes
 * step rows by execution (their unique (execution, seq)) and emails by visit (emails_workflow_step_uq).
 */
@Injectable()
export class WorkflowStatsRepository {
  executionCounts(db: Db, scope: ProjectScope, workflowId: string): Promise<{ status: ExecutionStatus; n: number }[]> {
    return queryPrepared<{ status: ExecutionStatus; n: number }>(
      db,
      `SELECT status, count(*)::int AS n FROM workflow_executions WHERE project_id = $1 AND workflow_id = $2 GROUP BY status`,
      [scope.projectId, workflowId],
    );
  }

  /**
   * Per (step id, type): visits entered; completed (COMPLETED, or SKIPPED: the execution moved on);
   * FAILED; WAITING now (a DELAY or WAIT_FOR_EVENT not over); emails of the visits delivered (SENT),
   * opened and clicked by a person.
   */
  stepCounts(db: Db, scope: ProjectScope, workflowId: string): Promise<StepStatsRow[]> {
    return queryPrepared<StepStatsRow>(
      db,
      `SELECT s.step_id AS "stepId", s.type,
              count(*)::int AS entered,
              count(*) FILTER (WHERE s.status IN ('COMPLETED', 'SKIPPED'))::int AS completed,
              count(*) FILTER (WHERE s.status = 'FAILED')::int AS failed,
              count(*) FILTER (WHERE s.status = 'WAITING')::int AS waiting,
              count(*) FILTER (WHERE e.status = 'SENT')::int AS "emailsSent",
              count(*) FILTER (WHERE e.opened_at IS NOT NULL)::int AS opened,
              count(*) FILTER (WHERE e.clicked_at IS NOT NULL)::int AS clicked
         FROM workflow_executions x
         JOIN workflow_execution_steps s ON s.execution_id = x.id AND s.project_id = x.project_id
         LEFT JOIN emails e ON e.workflow_execution_id = s.execution_id AND e.workflow_step_seq = s.seq AND e.project_id = s.project_id
        WHERE x.project_id = $1 AND x.workflow_id = $2
        GROUP BY s.step_id, s.type`,
      [scope.projectId, workflowId],
    );
  }
}
