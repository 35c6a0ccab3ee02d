import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { scopeOf } from '../../core/scope/project-scope.js';
import { EXECUTION_STATUSES, type ExecutionStatus } from './workflow-definition.js';
import type { MailWorkflowStats, MailWorkflowStepStats } from './workflow-stats.dto.js';
import { WorkflowStatsRepository } from './workflow-stats.repository.js';
import { WorkflowsService } from './workflows.service.js';

const ZERO = { entered: 0, completed: 0, failed: 0, waiting: 0, emailsSent: 0, opened: 0, clicked: 0 };

/** GET /workflows/{id}/stats: executions per status, and per step what its visits did. */
@Injectable()
export class WorkflowStatsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly workflows: WorkflowsService,
    private readonly stats: WorkflowStatsRepository,
  ) {}

  async get(project: ProjectContext, workflowId: string): Promise<MailWorkflowStats> {
    const scope = scopeOf(project);
    const workflow = await this.workflows.row(scope, workflowId);
    const [statusCounts, stepCounts] = await Promise.all([
      this.stats.executionCounts(this.dataSource, scope, workflow.id),
      this.stats.stepCounts(this.dataSource, scope, workflow.id),
    ]);
    const executions = Object.fromEntries(EXECUTION_STATUSES.map((status) => [status, 0])) as Record<ExecutionStatus, number>;
    for (const { status, n } of statusCounts) executions[status] = n;
    const counted = new Map(stepCounts.map((row) => [`${row.stepId} ${row.type}`, row]));
    // The definition's steps in order (zeros for those no execution reached), then visited steps it no longer has.
    const steps: MailWorkflowStepStats[] = workflow.steps.map((step) => {
      const key = `${step.id} ${step.type}`;
      const row = counted.get(key);
      counted.delete(key);
      return row ?? { stepId: step.id, type: step.type, ...ZERO };
    });
    return { executions, steps: [...steps, ...counted.values()] };
  }
}
