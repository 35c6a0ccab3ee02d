import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Req, UseInterceptors } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import type { Request } from 'express';
import type { MailList } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { ResponseStatusInterceptor, WithStatus } from '../../core/http/response-status.js';
import {
  CreateSuppressionBody,
  ListSuppressionsQuery,
  SuppressionImportResponse,
  SuppressionListResponse,
  SuppressionResponse,
  type MailSuppression,
  type MailSuppressionImport,
} from './suppressions.dto.js';
import { SuppressionsService } from './suppressions.service.js';

@ApiTags('suppressions')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('suppressions')
export class SuppressionsController {
  constructor(private readonly suppressions: SuppressionsService) {}

  @Get()
  @ApiOperation({
    summary: 'List suppressed addresses',
    description:
      'Newest first, keyset-paged (`cursor` / `nextCursor`). `reason` keeps one reason; `search` is a case-insensitive ' +
      'substring of the address. `source`: `smtp` (refused during delivery), `dsn` (asynchronous bounce report), `arf` ' +
      '(complaint report) or `api`.',
  })
  @ApiOkResponse({ type: SuppressionListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListSuppressionsQuery): Promise<MailList<MailSuppression>> {
    return this.suppressions.list(project, query);
  }

  @Post()
  @UseInterceptors(ResponseStatusInterceptor)
  @ApiOperation({
    summary: 'Suppress an address',
    description:
      '201 with the new entry (`MANUAL`, source `api`); 200 with the existing entry, unchanged, when the address is ' +
      'already listed (addresses compare case-insensitively). Every sending path skips a suppressed recipient: its ' +
      'email ends `SUPPRESSED`.',
  })
  @ApiResponse({ status: 201, type: SuppressionResponse, description: 'Added.' })
  @ApiResponse({ status: 200, type: SuppressionResponse, description: 'Already listed: the first entry.' })
  @ApiMailErrors(422)
  async add(@CurrentProject() project: ProjectContext, @Body() body: CreateSuppressionBody): Promise<WithStatus<MailSuppression>> {
    const { created, suppression } = await this.suppressions.add(project, body.email);
    return new WithStatus(created ? 201 : 200, suppression);
  }

  @Post('import')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Import suppressed addresses from CSV',
    description:
      'A `text/csv` body: a header row with an `email` column and optionally `reason` (`HARD_BOUNCE`, `COMPLAINT`, ' +
      '`MANUAL`; empty: `MANUAL`), then one address per row, at most 1,000,000 rows (413 beyond, nothing imported). ' +
      'Read as it arrives. `imported`: added; `skipped`: already listed or repeated; `invalid`: no valid address or an ' +
      'unknown reason. All or nothing: one transaction.',
  })
  @ApiConsumes('text/csv')
  @ApiBody({ schema: { type: 'string', example: 'email,reason\nada@example.com,MANUAL\n' } })
  @ApiOkResponse({ type: SuppressionImportResponse })
  @ApiMailErrors(413, 415, 422)
  import(@CurrentProject() project: ProjectContext, @Req() req: Request): Promise<MailSuppressionImport> {
    return this.suppressions.import(project, { contentType: req.headers['content-type'], body: req });
  }

  @Delete(':email')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove an address from the list', description: '404 when it is not listed. Case-insensitive.' })
  @ApiNoContentResponse()
  @ApiMailErrors(404)
  remove(@CurrentProject() project: ProjectContext, @Param('email') email: string): Promise<void> {
    return this.suppressions.remove(project, email);
  }
}
