import { ApiProperty } from '@nestjs/swagger';
import { EXECUTION_STATUSES, WORKFLOW_STEP_TYPES, type ExecutionStatus } from './workflow-definition.js';

/** GET /workflows/{id}/stats (decisions.md "Engagement analytics"). */
export interface MailWorkflowStats {
  executions: Record<ExecutionStatus, number>;
  steps: MailWorkflowStepStats[];
}

export interface MailWorkflowStepStats {
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

class ExecutionCountsDto implements Record<ExecutionStatus, number> {
  @ApiProperty() RUNNING: number;
  @ApiProperty() WAITING: number;
  @ApiProperty() COMPLETED: number;
  @ApiProperty() EXITED: number;
  @ApiProperty() FAILED: number;
  @ApiProperty() CANCELLED: number;
}

class WorkflowStepStatsDto implements MailWorkflowStepStats {
  @ApiProperty() stepId: string;
  @ApiProperty({ enum: WORKFLOW_STEP_TYPES }) type: string;
  @ApiProperty({ description: 'Visits of the step by executions (an execution may visit a step more than once).' }) entered: number;
  @ApiProperty({ description: 'Visits that finished and moved on (a SEND_EMAIL skipped for an unsubscribed contact included).' })
  completed: number;
  @ApiProperty({ description: 'Visits that failed (the execution failed with them).' }) failed: number;
  @ApiProperty({ description: 'Visits waiting now: a DELAY or WAIT_FOR_EVENT not over yet.' }) waiting: number;
  @ApiProperty({ description: 'SEND_EMAIL: emails of the visits the relay accepted.' }) emailsSent: number;
  @ApiProperty({ description: "SEND_EMAIL: emails with a person's open (machine opens do not count)." }) opened: number;
  @ApiProperty({ description: "SEND_EMAIL: emails with a person's click (machine clicks do not count)." }) clicked: number;
}

export class WorkflowStatsResponse implements MailWorkflowStats {
  @ApiProperty({ type: ExecutionCountsDto, description: `Executions per status (${EXECUTION_STATUSES.join(', ')}).` })
  executions: ExecutionCountsDto;
  @ApiProperty({
    type: [WorkflowStepStatsDto],
    description: "The workflow's steps in their order, then steps its executions visited that it no longer has.",
  })
  steps: WorkflowStepStatsDto[];
}
