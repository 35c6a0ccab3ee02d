import { Controller, Get, Header, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../../core/auth/api-key.decorators.js';
import { MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import { HtmlResponseInterceptor } from './html-response.interceptor.js';
import { confirmationPage, UNSUBSCRIBED_PAGE } from './unsubscribe-pages.js';
import { UnsubscribeService } from './unsubscribe.service.js';
import { WantsHtml } from './wants-html.decorator.js';

const INVALID_LINK = {
  status: 400,
  description: '`INVALID_UNSUBSCRIBE_LINK`: the token was altered or not issued by this service.',
  type: MailErrorBodyDto,
};
const TOKEN_PARAM = { name: 'token', description: 'The signed token of the link in the email' };

/**
 * The links in marketing emails. Public (no API key) and therefore outside the per-project API rate
 * limit, which the API key guard applies only after a key was found. Only POST unsubscribes: mail
 * scanners and previews fetch (GET) the links in a message without anyone clicking them.
 */
@ApiTags('unsubscribe')
@Public()
@Controller('unsubscribe')
@UseInterceptors(HtmlResponseInterceptor)
export class UnsubscribeController {
  constructor(private readonly unsubscribe: UnsubscribeService) {}

  @Get(':token')
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Unsubscribe page (link in the email)',
    description:
      'Checks the link and answers an HTML page asking to confirm, whose button POSTs to the same URL. Changes ' +
      'nothing by itself: link scanners and mail previews fetch links without anyone clicking them. A link of a ' +
      'deleted contact also answers the page. No API key.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'HTML page with an Unsubscribe button (a form POSTing to this URL)', schema: { type: 'string' } })
  @ApiResponse(INVALID_LINK)
  page(@Param('token') token: string): string {
    this.unsubscribe.checkLink(token);
    return confirmationPage(token);
  }

  @Post(':token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: "Unsubscribe (the page's button, and RFC 8058 one-click)",
    description:
      "Sets the contact's `subscribed` to false. What the page's button submits, and what mail clients call " +
      'for `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (body `List-Unsubscribe=One-Click`, form-encoded; ' +
      'any body is accepted). Answers an HTML confirmation page when the request accepts `text/html` (a ' +
      'browser), `{"success": true, "unsubscribed": true}` otherwise. Idempotent; a link of a deleted contact ' +
      'also answers 200. No API key.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('application/json', 'text/html')
  @ApiOkResponse({
    description: '`{"success": true, "unsubscribed": true}`, or an HTML confirmation page for browsers',
    content: {
      'application/json': {
        schema: {
          type: 'object',
          properties: { success: { type: 'boolean', enum: [true] }, unsubscribed: { type: 'boolean', enum: [true] } },
          required: ['success', 'unsubscribed'],
        },
      },
      'text/html': { schema: { type: 'string' } },
    },
  })
  @ApiResponse(INVALID_LINK)
  async confirm(@Param('token') token: string, @WantsHtml() wantsHtml: boolean): Promise<string | { success: true; unsubscribed: true }> {
    await this.unsubscribe.unsubscribe(token);
    return wantsHtml ? UNSUBSCRIBED_PAGE : { success: true, unsubscribed: true };
  }
}
