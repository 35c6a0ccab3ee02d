import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailList } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { ExecutionListResponse, ListExecutionsQuery, type MailWorkflowExecution } from './workflow-executions.dto.js';
import { WorkflowExecutionsService } from './workflow-executions.service.js';

@ApiTags('workflows')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('workflows/:id/executions')
export class WorkflowExecutionsController {
  constructor(private readonly executions: WorkflowExecutionsService) {}

  @Get()
  @ApiOperation({
    summary: "List a workflow's executions",
    description:
      'Newest first, keyset-paged (`nextCursor` -> `cursor`), `status` filters (RUNNING, WAITING, COMPLETED, EXITED, FAILED, ' +
      'CANCELLED). Each execution carries its step history in the order the steps ran. An unknown, deleted or other ' +
      "project's workflow is a 404.",
  })
  @ApiOkResponse({ type: ExecutionListResponse })
  @ApiMailErrors(404, 422)
  list(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Query() query: ListExecutionsQuery,
  ): Promise<MailList<MailWorkflowExecution>> {
    return this.executions.list(project, id, query);
  }
}
