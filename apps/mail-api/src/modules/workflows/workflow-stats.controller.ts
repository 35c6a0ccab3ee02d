import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { WorkflowStatsResponse, type MailWorkflowStats } from './workflow-stats.dto.js';
import { WorkflowStatsService } from './workflow-stats.service.js';

@ApiTags('workflows')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('workflows/:id/stats')
export class WorkflowStatsController {
  constructor(private readonly stats: WorkflowStatsService) {}

  @Get()
  @ApiOperation({
    summary: "A workflow's statistics",
    description:
      '`executions`: how many executions are in each status. `steps`: per step, its visits entered, completed, failed and ' +
      'waiting now, and for SEND_EMAIL the emails delivered and those a person opened or clicked (machine opens and ' +
      "clicks, such as link scanners', do not count). An unknown, deleted or other project's workflow is a 404.",
  })
  @ApiOkResponse({ type: WorkflowStatsResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailWorkflowStats> {
    return this.stats.get(project, id);
  }
}
