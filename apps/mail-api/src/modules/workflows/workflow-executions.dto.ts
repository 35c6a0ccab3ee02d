import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import type { MailList } from '@app/contracts';
import { IdPageQuery } from '../../core/http/pagination.js';
import { EXECUTION_STATUSES, STEP_STATUSES, type ExecutionStatus, type StepStatus } from './workflow-definition.js';

/** One step visit of an execution, in the order they ran. */
export interface MailExecutionStep {
  stepId: string;
  status: StepStatus;
  startedAt: string | null;
  completedAt: string | null;
  error?: string;
}

export interface MailWorkflowExecution {
  id: string;
  workflowId: string;
  contactId: string;
  status: ExecutionStatus;
  currentStepId: string | null;
  startedAt: string;
  completedAt: string | null;
  steps: MailExecutionStep[];
}

export class ListExecutionsQuery extends IdPageQuery {
  @ApiPropertyOptional({ enum: EXECUTION_STATUSES, description: 'Only executions in this status.' })
  @IsOptional()
  @IsIn(EXECUTION_STATUSES)
  status?: ExecutionStatus;
}

export class ExecutionStepResponse implements MailExecutionStep {
  @ApiProperty() stepId: string;
  @ApiProperty({
    enum: STEP_STATUSES,
    description:
      'PENDING (due, queued), RUNNING (a WEBHOOK attempt in flight), WAITING (a DELAY or WAIT_FOR_EVENT), COMPLETED, SKIPPED ' +
      '(a MARKETING template to an unsubscribed contact), FAILED, CANCELLED.',
  })
  status: StepStatus;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) startedAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: string | null;
  @ApiPropertyOptional({ description: 'Why the step failed (or why its last WEBHOOK attempt did).' }) error?: string;
}

export class ExecutionResponse implements MailWorkflowExecution {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) workflowId: string;
  @ApiProperty({ format: 'uuid' }) contactId: string;
  @ApiProperty({ enum: EXECUTION_STATUSES }) status: ExecutionStatus;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The step running or waiting; the failed step of a FAILED execution; null once it COMPLETED, EXITED or was CANCELLED.',
  })
  currentStepId: string | null;
  @ApiProperty({ format: 'date-time' }) startedAt: string;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: string | null;
  @ApiProperty({
    type: [ExecutionStepResponse],
    description: 'Every step visit so far, in order (a step in a loop appears once per visit).',
  })
  steps: ExecutionStepResponse[];
}

export class ExecutionListResponse implements MailList<MailWorkflowExecution> {
  @ApiProperty({ type: [ExecutionResponse] }) items: ExecutionResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Executions matching the filter, over all pages.' }) total: number;
}
