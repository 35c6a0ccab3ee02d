import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailSuccess, MailTrackResult } from '@app/contracts';
import { CurrentProject, PublicKeyAllowed } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { TrackBody, TrackResponse } from './track.dto.js';
import { TrackService } from './track.service.js';

@ApiTags('public API')
@ApiBearerAuth()
@Controller('v1/track')
export class TrackController {
  constructor(private readonly tracker: TrackService) {}

  @Post()
  @HttpCode(200)
  @PublicKeyAllowed()
  @ApiOperation({
    summary: 'Track an event for a contact',
    description:
      'Secret or public key. Creates the contact (subscribed unless `subscribed: false`) or updates it ' +
      "(its subscription changes only when `subscribed` is given), merges the persistent `data` into the contact's " +
      'data and records the event, in one transaction. With the public key (`pk_`), `subscribed` counts only when ' +
      'the call creates the contact, and `data` only adds keys the contact does not have (existing keys are neither ' +
      'overwritten nor deleted by `null`); the event records every value either way. `data.contact` and `data.event` ' +
      'are ids. Browsers may call this endpoint cross-origin (CORS) with the public key.',
  })
  @ApiOkResponse({ type: TrackResponse })
  @ApiMailErrors(422)
  async track(@CurrentProject() project: ProjectContext, @Body() body: TrackBody): Promise<MailSuccess<MailTrackResult>> {
    return { success: true, data: await this.tracker.track(project, body) };
  }
}
