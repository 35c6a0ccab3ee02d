import { Controller, Get, Header, Param, Redirect, StreamableFile } from '@nestjs/common';
import { ApiFoundResponse, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../../core/auth/api-key.decorators.js';
import { MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import { EngagementRequest, type EngagementRequestInfo } from './engagement-request.decorator.js';
import { EngagementService } from './engagement.service.js';

/** A transparent 1x1 GIF (42 bytes). */
const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const INVALID_LINK = {
  status: 400,
  description: '`INVALID_TRACKING_LINK`: the token was altered or not issued by this service.',
  type: MailErrorBodyDto,
};
const TOKEN_PARAM = { name: 'token', description: 'The signed token of the link in the email' };

/**
 * The engagement links of marketing emails (MAIL_TRACKING, on by default): the open pixel and click
 * redirects. Public (no API key), like unsubscribe links. Answers are never cached, so each load reaches
 * the service (every one is recorded; stats count each recipient once).
 */
@ApiTags('engagement')
@Public()
@Controller('t')
export class EngagementController {
  constructor(private readonly engagement: EngagementService) {}

  @Get('o/:token')
  @Header('Cache-Control', 'no-store, no-cache, must-revalidate, private')
  @ApiOperation({
    summary: 'Open pixel (image in a marketing email)',
    description:
      'A 1x1 transparent GIF (HEAD too). Every load is recorded as an open, marked `machine` when it is a HEAD request, ' +
      'comes from a user agent on the bundled list of link scanners and image proxies, or arrives less than ' +
      "MAIL_MACHINE_WINDOW_S seconds after the email was handed to SMTP. A person's first open counts in its campaign's " +
      "`openedCount` and records the contact's `email.opened` event; a machine's counts in `machineOpenedCount` only. " +
      'No API key. Mail clients that block images make opens an estimate, as with every pixel.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('image/gif')
  @ApiOkResponse({ description: 'image/gif, 42 bytes', schema: { type: 'string', format: 'binary' } })
  @ApiResponse(INVALID_LINK)
  async open(@Param('token') token: string, @EngagementRequest() request: EngagementRequestInfo): Promise<StreamableFile> {
    await this.engagement.opened(token, request);
    return new StreamableFile(PIXEL, { type: 'image/gif', length: PIXEL.length });
  }

  @Get('c/:token')
  @Redirect()
  @Header('Cache-Control', 'no-store')
  @Header('Referrer-Policy', 'no-referrer')
  @ApiOperation({
    summary: 'Click redirect (link in a marketing email)',
    description:
      'Answers 302 to the URL the email linked to (HEAD too, and for machines too); the token signs the email and that ' +
      'URL, so no other URL can be reached through it. Every click is recorded (per link: `GET /campaigns/{id}/links`), ' +
      'marked `machine` by the rules of the open pixel, and also when it is the third or later distinct link of the ' +
      "email clicked within one second. A person's first click counts in `clickedCount` (and as an open) and records " +
      "the contact's `email.clicked` event (`data.url`). No API key.",
  })
  @ApiParam(TOKEN_PARAM)
  @ApiFoundResponse({ description: 'Location: the original URL' })
  @ApiResponse(INVALID_LINK)
  async click(
    @Param('token') token: string,
    @EngagementRequest() request: EngagementRequestInfo,
  ): Promise<{ url: string; statusCode: number }> {
    return { url: await this.engagement.clicked(token, request), statusCode: 302 };
  }
}
