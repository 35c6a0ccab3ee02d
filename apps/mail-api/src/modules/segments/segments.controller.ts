import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailContact, MailList } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { IdPageQuery } from '../../core/http/pagination.js';
import {
  CreateSegmentBody,
  ListSegmentsQuery,
  MembersAddedResponse,
  MembersRemovedResponse,
  SegmentListResponse,
  SegmentMemberListResponse,
  SegmentMembersBody,
  SegmentResponse,
  UpdateSegmentBody,
  type MailSegment,
} from './segments.dto.js';
import { SegmentsService } from './segments.service.js';

@ApiTags('segments')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('segments')
export class SegmentsController {
  constructor(private readonly segments: SegmentsService) {}

  @Get()
  @ApiOperation({
    summary: 'List segments',
    description:
      'Newest first, keyset-paged by id (`nextCursor` as `cursor`; null on the last page). `total` counts every ' +
      'segment matching the filters; `search` is a case-insensitive substring of the name, `type` keeps one type. ' +
      'Each item carries its live `memberCount`.',
  })
  @ApiOkResponse({ type: SegmentListResponse })
  @ApiMailErrors(422)
  list(@CurrentProject() project: ProjectContext, @Query() query: ListSegmentsQuery): Promise<MailList<MailSegment>> {
    return this.segments.list(project, query);
  }

  @Post()
  @ApiOperation({
    summary: 'Create a segment',
    description:
      'Answers 201 with the segment (not wrapped). DYNAMIC segments need a `condition`; STATIC ones refuse it and ' +
      'get members through POST /segments/{id}/members. `type` is accepted in any letter case. Unknown top-level ' +
      'fields are ignored; inside `condition` every unknown property, field, operator or value is a 422 naming its path.',
  })
  @ApiCreatedResponse({ type: SegmentResponse })
  @ApiMailErrors(422)
  create(@CurrentProject() project: ProjectContext, @Body() body: CreateSegmentBody): Promise<MailSegment> {
    return this.segments.create(project, body);
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a segment', description: "With its live `memberCount`. Another project's segment is a 404." })
  @ApiOkResponse({ type: SegmentResponse })
  @ApiMailErrors(404)
  get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSegment> {
    return this.segments.get(project, id);
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a segment',
    description:
      'Any of `name`, `description` (`null` clears it) and, for DYNAMIC segments, `condition` (replaced whole). ' +
      'The type cannot change (422 `immutable`); a condition on a STATIC segment is a 422. An empty body changes nothing.',
  })
  @ApiOkResponse({ type: SegmentResponse })
  @ApiMailErrors(404, 422)
  update(@CurrentProject() project: ProjectContext, @Param('id') id: string, @Body() body: UpdateSegmentBody): Promise<MailSegment> {
    return this.segments.update(project, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a segment',
    description: '409 `SEGMENT_IN_USE` while a SCHEDULED or SENDING campaign targets it. Contacts are not deleted.',
  })
  @ApiNoContentResponse()
  @ApiMailErrors(404, 409)
  remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<void> {
    return this.segments.remove(project, id);
  }

  @Get(':id/contacts')
  @ApiOperation({
    summary: 'List the members of a segment',
    description:
      'Contact objects as GET /contacts returns them, newest first, keyset-paged (`nextCursor`). STATIC: its ' +
      'members; DYNAMIC: the contacts matching its condition now. `total` equals `memberCount`.',
  })
  @ApiOkResponse({ type: SegmentMemberListResponse })
  @ApiMailErrors(404, 422)
  members(@CurrentProject() project: ProjectContext, @Param('id') id: string, @Query() query: IdPageQuery): Promise<MailList<MailContact>> {
    return this.segments.listMembers(project, id, query);
  }

  @Post(':id/members')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Add contacts to a STATIC segment by email',
    description:
      'At most 1000 emails. Contacts the project does not have are created unsubscribed; existing contacts are not ' +
      'changed. Answers 200 `{added}`: how many were not members before. A DYNAMIC segment: 400 `SEGMENT_NOT_STATIC`.',
  })
  @ApiOkResponse({ type: MembersAddedResponse })
  @ApiMailErrors(400, 404, 422)
  addMembers(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Body() body: SegmentMembersBody,
  ): Promise<{ added: number }> {
    return this.segments.addMembers(project, id, body);
  }

  @Delete(':id/members')
  @ApiOperation({
    summary: 'Remove contacts from a STATIC segment by email',
    description:
      'At most 1000 emails. Answers 200 `{removed}`: how many were members. The contacts stay. A DYNAMIC segment: ' +
      '400 `SEGMENT_NOT_STATIC`.',
  })
  @ApiOkResponse({ type: MembersRemovedResponse })
  @ApiMailErrors(400, 404, 422)
  removeMembers(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Body() body: SegmentMembersBody,
  ): Promise<{ removed: number }> {
    return this.segments.removeMembers(project, id, body);
  }
}
