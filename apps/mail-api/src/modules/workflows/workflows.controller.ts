import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailList } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import {
  CreatedWorkflowResponse,
  CreateWorkflowBody,
  ListWorkflowsQuery,
  UpdateWorkflowBody,
  WorkflowListResponse,
  WorkflowResponse,
  type MailWorkflow,
  type MailWorkflowCreated,
} from './workflows.dto.js';
import { WorkflowsService } from './workflows.service.js';

@ApiTags('workflows')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('workflows')
export class WorkflowsController {
  constructor(private readonly workflows: WorkflowsService) {}

  @Get()
  @ApiOperation({
    summary: 'List workflows',
    description: 'Newest first, keyset-paged by id (`nextCursor` -> `cursor`). `enabled` and `eventName` filter.',
  })
  @ApiOkResponse({ type: WorkflowListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListWorkflowsQuery): Promise<MailList<MailWorkflow>> {
    return this.workflows.list(project, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Create a workflow',
    description:
      'Answers 201 with the workflow and its `webhookSecret` (never shown again). Disabled unless `enabled: true`. Every event ' +
      'tracked for a contact whose name is `eventName` starts an execution of each enabled workflow, unless the contact ' +
      'already has one (running or finished) and `allowReentry` is false. The steps are validated as a graph: 422 ' +
      '`VALIDATION_ERROR` naming the field for an unknown step id, a cycle through no DELAY or WAIT_FOR_EVENT step, a config ' +
      'that does not validate, or a SEND_EMAIL template the project does not have. WEBHOOK requests carry ' +
      '`X-Webhook-Signature: sha256=<hex HMAC-SHA256(raw body, webhookSecret)>`, `X-Webhook-Id` (`<executionId>.<stepId>.<visit>`, ' +
      'the same on every attempt) and `X-Webhook-Attempt`; they time out after 10 s, are tried 5 times (backoff doubling from ' +
      '1 s), refuse redirects, and may not target private or loopback addresses in production unless ' +
      'MAIL_WEBHOOK_ALLOW_PRIVATE=true.',
  })
  @ApiCreatedResponse({ type: CreatedWorkflowResponse })
  @ApiMailErrors(422)
  create(@CurrentProject() project: ProjectContext, @Body() body: CreateWorkflowBody): Promise<MailWorkflowCreated> {
    return this.workflows.create(project, body);
  }

  @Get(':id')
  @ApiOperation({
    summary: 'Get a workflow',
    description: "Another project's workflow, a deleted one or an id that is not a UUID is a 404.",
  })
  @ApiOkResponse({ type: WorkflowResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailWorkflow> {
    return this.workflows.get(project, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a workflow',
    description:
      'Any subset of the fields; absent fields stay. `enabled: false` stops new executions (running ones go on). `steps` ' +
      'replaces every step and is validated like on create; running executions continue from their current step id.',
  })
  @ApiOkResponse({ type: WorkflowResponse })
  @ApiMailErrors(404, 422)
  update(@CurrentProject() project: ProjectContext, @Param('id') id: string, @Body() body: UpdateWorkflowBody): Promise<MailWorkflow> {
    return this.workflows.update(project, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a workflow',
    description:
      'Cancels its running and waiting executions (CANCELLED: no further step runs) and removes it, executions included, from the API.',
  })
  @ApiNoContentResponse()
  @ApiMailErrors(404)
  remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<void> {
    return this.workflows.remove(project, id);
  }
}
