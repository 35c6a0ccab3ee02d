import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { MailList, MailSuccess } from '@app/contracts';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors, MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import {
  CampaignListResponse,
  CampaignResponse,
  CampaignStatsResponse,
  CampaignTestResponse,
  CreateCampaignBody,
  DeletedCampaignResponse,
  ListCampaignsQuery,
  SendCampaignBody,
  TestCampaignBody,
  UpdateCampaignBody,
  type MailCampaign,
  type MailCampaignStats,
  type MailCampaignTestResult,
} from './campaigns.dto.js';
import { CampaignLinksResponse, type MailCampaignLink } from './campaign-links.dto.js';
import { CampaignsService } from './campaigns.service.js';

const INVALID_STATE = {
  status: 400,
  description: "`INVALID_CAMPAIGN_STATE`: the move is not allowed from the campaign's status.",
  type: MailErrorBodyDto,
};
const NOT_VERIFIED = {
  status: 403,
  description: "`DOMAIN_NOT_VERIFIED`: `from` is not on one of the project's VERIFIED domains.",
  type: MailErrorBodyDto,
};

const ok = <T>(data: T): MailSuccess<T> => ({ success: true, data });

@ApiTags('campaigns')
@ApiBearerAuth()
@ApiMailErrors()
@Controller('campaigns')
export class CampaignsController {
  constructor(private readonly campaigns: CampaignsService) {}

  @Get()
  @ApiOperation({
    summary: 'List campaigns',
    description: "Newest first, keyset-paged (`cursor` = the previous page's `nextCursor`); `status` keeps one status.",
  })
  @ApiOkResponse({ type: CampaignListResponse })
  @ApiMailErrors(422)
  async list(@CurrentProject() project: ProjectContext, @Query() query: ListCampaignsQuery): Promise<MailSuccess<MailList<MailCampaign>>> {
    return ok(await this.campaigns.list(project, query));
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Create a campaign',
    description:
      'Answers 200 (as the spec shows) with the campaign in status DRAFT. `audienceType` SEGMENT needs a `segmentId` ' +
      'of the project, FILTERED an `audienceFilter` (a segment condition); both are 422 otherwise.',
  })
  @ApiOkResponse({ type: CampaignResponse })
  @ApiResponse(NOT_VERIFIED)
  @ApiMailErrors(422)
  async create(@CurrentProject() project: ProjectContext, @Body() body: CreateCampaignBody): Promise<MailSuccess<MailCampaign>> {
    return ok(await this.campaigns.create(project, body));
  }

  @Get(':id')
  @ApiOperation({ summary: 'Get a campaign', description: "Another project's campaign is a 404." })
  @ApiOkResponse({ type: CampaignResponse })
  @ApiMailErrors(404)
  async get(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSuccess<MailCampaign>> {
    return ok(await this.campaigns.get(project, id));
  }

  @Patch(':id')
  @ApiOperation({
    summary: 'Update a campaign',
    description: 'DRAFT or SCHEDULED only (400 `INVALID_CAMPAIGN_STATE` otherwise). Absent fields stay; `null` clears an optional one.',
  })
  @ApiOkResponse({ type: CampaignResponse })
  @ApiResponse(INVALID_STATE)
  @ApiResponse(NOT_VERIFIED)
  @ApiMailErrors(404, 422)
  async update(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Body() body: UpdateCampaignBody,
  ): Promise<MailSuccess<MailCampaign>> {
    return ok(await this.campaigns.update(project, id, body));
  }

  @Delete(':id')
  @ApiOperation({ summary: 'Delete a campaign', description: 'Only a DRAFT (400 `INVALID_CAMPAIGN_STATE` otherwise).' })
  @ApiOkResponse({ type: DeletedCampaignResponse })
  @ApiResponse(INVALID_STATE)
  @ApiMailErrors(404)
  async remove(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSuccess<{ id: string }>> {
    return ok(await this.campaigns.remove(project, id));
  }

  @Post(':id/send')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send or schedule a campaign',
    description:
      'From DRAFT or SCHEDULED. A future `scheduledFor` schedules it (SCHEDULED; sending again reschedules); otherwise it ' +
      "starts now (SENDING). The audience is taken when sending starts: the project's subscribed contacts it selects, each " +
      'receiving at most one email, rendered with their own data. The campaign becomes SENT when every email is finished ' +
      '(sent, bounced or failed). Marketing emails: unsubscribe link and List-Unsubscribe headers; open and click tracking ' +
      'unless MAIL_TRACKING=false. Sending goes at MAIL_RATE_PER_SECOND, behind transactional mail.',
  })
  @ApiOkResponse({ type: CampaignResponse })
  @ApiResponse(INVALID_STATE)
  @ApiResponse(NOT_VERIFIED)
  @ApiMailErrors(404, 422)
  async send(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Body() body: SendCampaignBody,
  ): Promise<MailSuccess<MailCampaign>> {
    return ok(await this.campaigns.send(project, id, body));
  }

  @Post(':id/cancel')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Cancel a campaign',
    description:
      'From SCHEDULED or SENDING: CANCELLED at once, and its emails not sent yet are CANCELLED too (never sent); an email ' +
      'already in the hands of the relay may still arrive.',
  })
  @ApiOkResponse({ type: CampaignResponse })
  @ApiResponse(INVALID_STATE)
  @ApiMailErrors(404)
  async cancel(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSuccess<MailCampaign>> {
    return ok(await this.campaigns.cancel(project, id));
  }

  @Post(':id/test')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send a test email',
    description:
      'One email now to `email`, subject prefixed `[TEST] `, rendered with that address and empty data (`{{unsubscribeUrl}}` ' +
      'renders as `#`). Any status; creates no contact and changes nothing else (no stats, no tracking).',
  })
  @ApiOkResponse({ type: CampaignTestResponse })
  @ApiResponse(NOT_VERIFIED)
  @ApiMailErrors(404, 422)
  async test(
    @CurrentProject() project: ProjectContext,
    @Param('id') id: string,
    @Body() body: TestCampaignBody,
  ): Promise<MailSuccess<MailCampaignTestResult>> {
    return ok(await this.campaigns.test(project, id, body.email));
  }

  @Get(':id/stats')
  @ApiOperation({
    summary: 'Campaign statistics',
    description:
      "Counts over the campaign's emails (one per recipient): sent = delivered + bounced; opened and clicked count each " +
      "recipient with a person's open or click once (a click counts as an open too); opens and clicks marked `machine` " +
      '(link scanners, image proxies, fetches at delivery, link bursts) count only in machineOpenedCount and ' +
      'machineClickedCount. Rates are fractions from 0 to 1.',
  })
  @ApiOkResponse({ type: CampaignStatsResponse })
  @ApiMailErrors(404)
  async stats(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSuccess<MailCampaignStats>> {
    return ok(await this.campaigns.stats(project, id));
  }

  @Get(':id/links')
  @ApiOperation({
    summary: 'Clicks per link',
    description:
      "Every tracked link of the campaign's emails that was clicked, most clicked first: `clicks` every click, " +
      "`uniqueClicks` recipients with a person's click on it, `machineClicks` the clicks marked `machine`. Another " +
      "project's campaign is a 404.",
  })
  @ApiOkResponse({ type: CampaignLinksResponse })
  @ApiMailErrors(404)
  async links(@CurrentProject() project: ProjectContext, @Param('id') id: string): Promise<MailSuccess<{ items: MailCampaignLink[] }>> {
    return ok(await this.campaigns.links(project, id));
  }
}
