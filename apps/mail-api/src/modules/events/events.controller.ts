import { Controller, Get, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailEventName, MailList, MailTrackedEvent } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { EventListResponse, EventNameListResponse, ListEventNamesQuery, ListEventsQuery } from './events.dto.js';
import { EventsService } from './events.service.js';

@ApiTags('events')
@ApiBearerAuth()
@ApiMailErrors(422)
@Controller('events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Get()
  @ApiOperation({
    summary: 'List tracked events',
    description:
      "Newest first, keyset-paged (`cursor` = the previous page's `nextCursor`). Filters: `name`, `contactId` or " +
      "`email` (the contact's), `from` (inclusive) and `to` (exclusive) as ISO 8601 times. `total` counts all matches.",
  })
  @ApiOkResponse({ type: EventListResponse })
  list(@CurrentProject() project: ProjectContext, @Query() query: ListEventsQuery): Promise<MailList<MailTrackedEvent>> {
    return this.events.list(project, query);
  }

  @Get('names')
  @ApiOperation({
    summary: 'List the distinct event names',
    description: 'In name order, each with its event count and last tracking time; paged like every list.',
  })
  @ApiOkResponse({ type: EventNameListResponse })
  names(@CurrentProject() project: ProjectContext, @Query() query: ListEventNamesQuery): Promise<MailList<MailEventName>> {
    return this.events.names(project, query);
  }
}
