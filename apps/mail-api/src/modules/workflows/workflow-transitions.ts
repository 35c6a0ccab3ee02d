import { Injectable } from '@nestjs/common';
import type { Db } from '@app/service-kit';
import type { ProjectScope } from '../../core/scope/project-scope.js';
import { MAX_STEP_VISITS } from './workflow-definition.js';
import { WorkflowExecutionsRepository, type DueStep } from './workflow-executions.repository.js';
import { WorkflowStepsRepository, type StepContextRow } from './workflow-steps.repository.js';

/** Where a step visit leads: the next step (null: the execution is COMPLETED), EXIT, or a failure. */
export type Transition = { kind: 'next'; stepId: string | null } | { kind: 'exit' } | { kind: 'fail'; error: string };

/**
 * Moving an execution on, inside the transaction that finished the current visit: the next visit's row
 * (PENDING, due now; its job is queued after commit) or the execution's end. Lock order is always the
 * step row, then the execution row (DELETE cancels in the same order), so the two never deadlock.
 */
@Injectable()
export class WorkflowTransitions {
  constructor(
    private readonly executions: WorkflowExecutionsRepository,
    private readonly steps: WorkflowStepsRepository,
  ) {}

  /** Applies `transition` after the current visit; answers the next visit's row, if there is one. */
  async apply(tx: Db, scope: ProjectScope, ctx: StepContextRow, transition: Transition): Promise<DueStep | null> {
    if (transition.kind === 'exit') {
      await this.executions.finish(tx, scope, { id: ctx.execution_id, status: 'EXITED' });
      return null;
    }
    if (transition.kind === 'fail') {
      await this.executions.finish(tx, scope, { id: ctx.execution_id, status: 'FAILED', error: transition.error });
      return null;
    }
    if (transition.stepId === null) {
      await this.executions.finish(tx, scope, { id: ctx.execution_id, status: 'COMPLETED' });
      return null;
    }
    const next = ctx.workflow_steps.find((step) => step.id === transition.stepId);
    if (!next) return this.apply(tx, scope, ctx, { kind: 'fail', error: `step ${transition.stepId} is no longer in the workflow` });
    if (ctx.step_count >= MAX_STEP_VISITS) {
      return this.apply(tx, scope, ctx, { kind: 'fail', error: `the execution ran ${MAX_STEP_VISITS} steps, the most one may run` });
    }
    if (!(await this.executions.advance(tx, scope, { id: ctx.execution_id, stepId: next.id }))) return null;
    return this.steps.insertNext(tx, scope, { executionId: ctx.execution_id, contactId: ctx.contact_id, seq: ctx.seq + 1, step: next });
  }

  /** The current visit fails, and the execution with it. */
  async fail(tx: Db, scope: ProjectScope, ctx: StepContextRow, error: string): Promise<void> {
    if (await this.steps.failOpen(tx, scope, { id: ctx.id, error })) await this.apply(tx, scope, ctx, { kind: 'fail', error });
  }
}
