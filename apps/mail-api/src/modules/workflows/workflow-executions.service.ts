import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MailList } from '@app/contracts';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { decodeCursor, encodeCursor, takePage } from '../../core/http/pagination.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import type { ListExecutionsQuery, MailExecutionStep, MailWorkflowExecution } from './workflow-executions.dto.js';
import { WorkflowExecutionsRepository } from './workflow-executions.repository.js';
import { WorkflowStepsRepository, type StepHistoryRow } from './workflow-steps.repository.js';
import { WorkflowsService } from './workflows.service.js';

function toStep(row: StepHistoryRow): MailExecutionStep {
  return {
    stepId: row.step_id,
    status: row.status,
    startedAt: row.started_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
    ...(row.error ? { error: row.error } : {}),
  };
}

/** GET /workflows/{id}/executions: a page of executions, each with its step history (two statements a page). */
@Injectable()
export class WorkflowExecutionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsService,
    private readonly executions: WorkflowExecutionsRepository,
    private readonly steps: WorkflowStepsRepository,
  ) {}

  async list(project: ProjectContext, workflowId: string, query: ListExecutionsQuery): Promise<MailList<MailWorkflowExecution>> {
    const scope = scopeOf(project);
    await this.workflows.row(scope, workflowId);
    const { rows, total } = await this.executions.list(this.dataSource, scope, {
      workflowId,
      status: query.status,
      beforeId: query.cursor ? decodeCursor(query.cursor) : undefined,
      limit: query.limit,
    });
    const { page, hasMore } = takePage(rows, query.limit);
    const history = new Map<string, MailExecutionStep[]>();
    for (const step of await this.steps.history(
      this.dataSource,
      scope,
      page.map((r) => r.id),
    )) {
      const list = history.get(step.execution_id) ?? [];
      list.push(toStep(step));
      history.set(step.execution_id, list);
    }
    const items = page.map((row) => ({
      id: row.id,
      workflowId: row.workflow_id,
      contactId: row.contact_id,
      status: row.status,
      currentStepId: row.current_step_id,
      startedAt: row.started_at.toISOString(),
      completedAt: row.completed_at?.toISOString() ?? null,
      steps: history.get(row.id) ?? [],
    }));
    return { items, nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null, hasMore, total };
  }
}
