import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsDefined, IsNotEmpty, IsOptional, IsString, MaxLength, ValidateIf } from 'class-validator';
import type { MailList } from '@app/contracts';
import { IdPageQuery, toBooleanQuery, trimString } from '../../core/http/pagination.js';
import { HasNoNulCharacter } from '../../core/http/text-validators.js';
import { MAX_EVENT_NAME_LENGTH } from '../events/events.dto.js';
import { MAX_STEPS, WORKFLOW_STEP_TYPES, type WorkflowStep, type WorkflowStepType } from './workflow-definition.js';

export const MAX_WORKFLOW_NAME = 200;
export const MAX_WORKFLOW_DESCRIPTION = 2000;

/** A workflow as the API answers it (never its webhook secret, except in the create response). */
export interface MailWorkflow {
  id: string;
  name: string;
  description: string | null;
  eventName: string;
  enabled: boolean;
  allowReentry: boolean;
  steps: WorkflowStep[];
  createdAt: string;
  updatedAt: string;
}

export interface MailWorkflowCreated extends MailWorkflow {
  webhookSecret: string;
}

const STEPS_DESCRIPTION =
  `1 to ${MAX_STEPS} steps \`{id, type, config, next?}\`; execution starts at the first and follows \`next\` (a step id; ` +
  'null or absent ends it COMPLETED). Configs: `SEND_EMAIL {templateId}` (a template of the project, sent to the contact); ' +
  '`DELAY {amount, unit: seconds|minutes|hours|days}`; `WAIT_FOR_EVENT {eventName, timeoutSeconds}` with `next` when the ' +
  'contact tracks the event in time and `onTimeout` otherwise; `CONDITION {field, operator, value?, unit?}` (a segment filter ' +
  'evaluated on the contact) with `onTrue` and `onFalse` instead of `next`; `WEBHOOK {url, method: POST|PUT|PATCH (default ' +
  'POST), headers?, body?}`; `UPDATE_CONTACT {data?, subscribed?}`; `EXIT {}` (ends it EXITED). An unknown step id, a cycle ' +
  'through no DELAY or WAIT_FOR_EVENT step, an unknown property or an invalid config is a 422 naming the field ' +
  '(`steps[2].config.amount`).';

const EVENT_NAME_DESCRIPTION =
  "The event that starts an execution for the contact: a name tracked with POST /v1/track, or one of the service's own " +
  '(`email.sent`, `email.opened`, `email.clicked`, `email.bounced`).';

const Rules = {
  name: () => applyDecorators(Transform(trimString), IsString(), IsNotEmpty(), MaxLength(MAX_WORKFLOW_NAME), HasNoNulCharacter()),
  eventName: () => applyDecorators(Transform(trimString), IsString(), IsNotEmpty(), MaxLength(MAX_EVENT_NAME_LENGTH), HasNoNulCharacter()),
  description: () => applyDecorators(IsOptional(), IsString(), MaxLength(MAX_WORKFLOW_DESCRIPTION), HasNoNulCharacter()),
};

/** PATCH: an absent field stays as it is. */
const present = (field: string) => ValidateIf((o: Record<string, unknown>) => o[field] !== undefined);

export class WorkflowStepDto {
  @ApiProperty({ maxLength: 64, description: 'Client-chosen, unique in the workflow: letters, digits, `_`, `-`, `.`.' }) id: string;
  @ApiProperty({ enum: WORKFLOW_STEP_TYPES }) type: WorkflowStepType;
  @ApiProperty({ type: 'object', additionalProperties: true, description: "The type's config (see the workflow's `steps`)." })
  config: Record<string, unknown>;
  @ApiPropertyOptional({ type: String, nullable: true }) next?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'CONDITION only.' }) onTrue?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'CONDITION only.' }) onFalse?: string | null;
  @ApiPropertyOptional({ type: String, nullable: true, description: 'WAIT_FOR_EVENT only.' }) onTimeout?: string | null;
}

export class CreateWorkflowBody {
  @ApiProperty({ minLength: 1, maxLength: MAX_WORKFLOW_NAME, description: 'Trimmed.' })
  @Rules.name()
  name: string;

  @ApiPropertyOptional({ maxLength: MAX_WORKFLOW_DESCRIPTION, nullable: true })
  @Rules.description()
  description?: string | null;

  @ApiProperty({ maxLength: MAX_EVENT_NAME_LENGTH, description: EVENT_NAME_DESCRIPTION })
  @Rules.eventName()
  eventName: string;

  @ApiPropertyOptional({ default: false, description: 'Only enabled workflows start executions.' })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    default: false,
    description: 'false: a contact that already has an execution of this workflow (running or finished) starts no other.',
  })
  @IsOptional()
  @IsBoolean()
  allowReentry?: boolean;

  @ApiProperty({ type: [WorkflowStepDto], description: STEPS_DESCRIPTION })
  @IsDefined()
  steps: unknown;
}

export class UpdateWorkflowBody {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_WORKFLOW_NAME })
  @present('name')
  @Rules.name()
  name?: string;

  @ApiPropertyOptional({ maxLength: MAX_WORKFLOW_DESCRIPTION, nullable: true, description: '`null` clears it.' })
  @Rules.description()
  description?: string | null;

  @ApiPropertyOptional({ maxLength: MAX_EVENT_NAME_LENGTH, description: EVENT_NAME_DESCRIPTION })
  @present('eventName')
  @Rules.eventName()
  eventName?: string;

  @ApiPropertyOptional({ description: 'false stops new executions; running ones go on.' })
  @present('enabled')
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional()
  @present('allowReentry')
  @IsBoolean()
  allowReentry?: boolean;

  @ApiPropertyOptional({
    type: [WorkflowStepDto],
    description: `Replaces every step. ${STEPS_DESCRIPTION} Running executions go on from their current step id in the new steps; one whose step no longer exists ends FAILED.`,
  })
  @present('steps')
  @IsDefined()
  steps?: unknown;
}

export class ListWorkflowsQuery extends IdPageQuery {
  @ApiPropertyOptional({ description: 'Only enabled (true) or disabled (false) workflows.' })
  @IsOptional()
  @Transform(toBooleanQuery)
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({ maxLength: MAX_EVENT_NAME_LENGTH, description: 'Only workflows started by this event name.' })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_EVENT_NAME_LENGTH)
  @HasNoNulCharacter()
  eventName?: string;
}

export class WorkflowResponse implements MailWorkflow {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() eventName: string;
  @ApiProperty() enabled: boolean;
  @ApiProperty() allowReentry: boolean;
  @ApiProperty({ type: [WorkflowStepDto] }) steps: WorkflowStep[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedWorkflowResponse extends WorkflowResponse implements MailWorkflowCreated {
  @ApiProperty({
    description:
      'Signs every WEBHOOK request of this workflow: `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed by ' +
      'the UTF-8 bytes of this secret>`. Returned only here: store it now.',
  })
  webhookSecret: string;
}

export class WorkflowListResponse implements MailList<MailWorkflow> {
  @ApiProperty({ type: [WorkflowResponse] }) items: WorkflowResponse[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page.' })
  nextCursor: string | null;
  @ApiProperty() hasMore: boolean;
  @ApiProperty({ description: 'Workflows matching the filters, over all pages.' }) total: number;
}
