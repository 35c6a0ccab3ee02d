import { Controller, Get, Header, HttpCode, Param, Post, UseInterceptors } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../../core/auth/api-key.decorators.js';
import { MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import { HtmlResponseInterceptor } from './html-response.interceptor.js';
import { UnsubscribeService } from './unsubscribe.service.js';

const CONFIRMATION_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Unsubscribed</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 4rem auto; padding: 0 1rem; color: #222">
<h1 style="font-size: 1.5rem">You have been unsubscribed</h1>
<p>You will no longer receive marketing emails from this sender. Transactional messages about your account may still arrive.</p>
</body></html>
`;

const INVALID_LINK = { status: 400, description: '`INVALID_UNSUBSCRIBE_LINK`: the token was altered or not issued by this service.', type: MailErrorBodyDto };
const TOKEN_PARAM = { name: 'token', description: 'The signed token of the link in the email' };

/**
 * The links in marketing emails. Public (no API key) and therefore outside the per-project API rate
 * limit, which the API key guard applies only after a key was found.
 */
@ApiTags('unsubscribe')
@Public()
@Controller('unsubscribe')
export class UnsubscribeController {
  constructor(private readonly unsubscribe: UnsubscribeService) {}

  @Get(':token')
  @UseInterceptors(HtmlResponseInterceptor)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Unsubscribe (link in the email)',
    description:
      'Sets the contact\'s `subscribed` to false and answers a small HTML confirmation page. Idempotent; a link of a ' +
      'deleted contact also answers 200. No API key.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiProduces('text/html')
  @ApiOkResponse({ description: 'HTML confirmation page' })
  @ApiResponse(INVALID_LINK)
  async page(@Param('token') token: string): Promise<string> {
    await this.unsubscribe.unsubscribe(token);
    return CONFIRMATION_PAGE;
  }

  @Post(':token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'One-click unsubscribe (RFC 8058)',
    description:
      'What mail clients call for `List-Unsubscribe-Post: List-Unsubscribe=One-Click` (body ' +
      '`List-Unsubscribe=One-Click`, form-encoded; any body is accepted). Same effect as the GET. No API key.',
  })
  @ApiParam(TOKEN_PARAM)
  @ApiOkResponse({ description: '`{"success": true, "unsubscribed": true}`' })
  @ApiResponse(INVALID_LINK)
  async oneClick(@Param('token') token: string): Promise<{ success: true; unsubscribed: true }> {
    await this.unsubscribe.unsubscribe(token);
    return { success: true, unsubscribed: true };
  }
}
