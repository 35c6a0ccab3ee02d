import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailList, MailTemplate } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { CreateTemplateBody, ListTemplatesQuery, TemplateListResponse, TemplateResponse, UpdateTemplateBody } from './templates.dto.js';
import { TemplatesService } from './templates.service.js';

@ApiTags('templates')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Get()
  @ApiOperation({
    summary: 'List templates',
    description:
      'Newest first, keyset-paged by id: pass `nextCursor` from the previous page as `cursor`; it is null on the ' +
      'last page. `total` counts every template matching the filters. `search` is a case-insensitive substring ' +
      'of the name; `type` keeps one type.',
  })
  @ApiOkResponse({ type: TemplateListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListTemplatesQuery): Promise<MailList<MailTemplate>> {
    return this.templates.list(project, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Create a template',
    description:
      'Answers 201 with the template (not wrapped). `subject` and `body` placeholders are checked when saved ' +
      '(422 `invalidPlaceholder` with the line and column of each problem). `type` defaults to TRANSACTIONAL. ' +
      'The `from` address does not need a verified domain at save time; sending from the template does.',
  })
  @ApiCreatedResponse({ type: TemplateResponse })
  @ApiMailErrors(422)
  create(@CurrentProject() project: ProjectContext, @Body() body: CreateTemplateBody): Promise<MailTemplate> {
    return this.templates.create(project, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a template', description: "Another project's template, or an id that is not a UUID, is a 404." })
  @ApiOkResponse({ type: TemplateResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailTemplate> {
    return this.templates.findById(project, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a template',
    description:
      'Any subset of the fields; absent fields stay as they are. `null` clears `from`, `fromName`, `replyTo` and ' +
      '`description`; it is a 422 for `name`, `subject`, `body` and `type`. An empty body changes nothing.',
  })
  @ApiOkResponse({ type: TemplateResponse })
  @ApiMailErrors(404, 422)
  update(@CurrentProject() project: ProjectContext, @Param('id') id: string, @Body() body: UpdateTemplateBody): Promise<MailTemplate> {
    return this.templates.update(project, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a template', description: 'Emails already sent from it keep their content.' })
  @ApiNoContentResponse()
  @ApiMailErrors(404)
  remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<void> {
    return this.templates.remove(project, id);
  }
}
