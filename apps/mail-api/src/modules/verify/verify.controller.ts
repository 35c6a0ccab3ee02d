import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { MailSuccess, MailVerificationResult } from '@app/contracts';
import { ApiMailErrors } from '../../core/http/openapi-errors.js';
import { VerifyBody, VerifyResponse } from './verify.dto.js';
import { VerifyService } from './verify.service.js';

@ApiTags('public API')
@ApiBearerAuth()
@Controller('v1/verify')
export class VerifyController {
  constructor(private readonly verifier: VerifyService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Verify an email address',
    description:
      'Checks, in order: syntax; disposable, personal-provider and alias domain (bundled lists); plus addressing; ' +
      'typo (with `suggestion`); NS, MX and A/AAAA records through the configured resolvers (`MAIL_DNS_SERVERS`), ' +
      '2 s per lookup, answers cached 5 minutes. `valid` = syntax + domain exists + MX. `reasons` explains every ' +
      'negative finding. When the domain does not exist, MX and A/AAAA are not looked up.',
  })
  @ApiOkResponse({ type: VerifyResponse })
  @ApiMailErrors(422)
  async verify(@Body() body: VerifyBody): Promise<MailSuccess<MailVerificationResult>> {
    return { success: true, data: await this.verifier.verify(body.email) };
  }
}
