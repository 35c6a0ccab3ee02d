import { Controller, Get, Header, Headers, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth } from '../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { ErrorDto } from '../../core/http/common.dto.js';
import { DeclaredEventsService } from './declared-events.service.js';
import { EventStreamService } from './event-stream.service.js';
import { DeclaredEventListDto, ListEventsQuery, StreamEventsQuery } from './platform-events.dto.js';

@ApiTags('events')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@Controller('events')
export class PlatformEventsController {
  constructor(
    private readonly declared: DeclaredEventsService,
    private readonly streams: EventStreamService,
  ) {}

  @Get()
  @ApiOperation({
    summary: 'Declared events',
    description: 'The events modules declare in code, by id. Filters: category, module, excludeTriggerExcluded (default true).',
  })
  @ApiOkResponse({ type: DeclaredEventListDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid filter.' })
  list(@Query() query: ListEventsQuery) {
    return this.declared.list({
      category: query.category,
      module: query.module,
      excludeTriggerExcluded: query.excludeTriggerExcluded ?? true,
    });
  }

  @Get('stream')
  @Header('Cache-Control', 'no-cache, no-transform')
  @Header('X-Accel-Buffering', 'no')
  @ApiProduces('text/event-stream')
  @ApiOperation({
    summary: 'Live event stream (Server-Sent Events)',
    description:
      'A `: connected` comment first, a `: heartbeat` comment every 30 s, then `data: {"id", "payload", "timestamp", ' +
      '"organizationId"}` for each event declared clientBroadcast in the caller’s tenant (notification events only to ' +
      'their recipient), emitted on any instance. Browsers authenticate with the auth_token cookie. ' +
      'The stream ends when the session that opened it ends (logout, password change or reset, tenant deactivation), on every instance; ' +
      'at most 5 streams per user are open on one instance. Each event has an `id:`; reconnecting with `Last-Event-ID` ' +
      '(or `?lastEventId=`) replays the events missed (up to 5 minutes or 1,000 events of the tenant), in order, once; ' +
      'an older gap gets one `event: reset` (reload, then carry on).',
  })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'The last `id:` received; sent by EventSource on reconnect.' })
  @ApiOkResponse({ description: 'The event stream (SSE frames).', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiTooManyRequestsResponse({
    type: ErrorDto,
    description: 'The user already has 5 open streams on this instance: {error: "too many open event streams"}.',
  })
  stream(@CurrentAuth() auth: AuthContext, @Query() query: StreamEventsQuery, @Headers('last-event-id') lastEventIdHeader?: string) {
    const lastEventId = (lastEventIdHeader || query.lastEventId)?.slice(0, 64) || undefined;
    return this.streams.open(auth, lastEventId);
  }
}
