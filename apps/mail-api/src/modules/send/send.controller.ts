import { Body, Controller, Headers, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiHeader, ApiOkResponse, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { MailSendResult, MailSuccess } from '@app/contracts';
import { BodyLimit } from '@app/service-kit';
import { CurrentProject } from '../../core/auth/api-key.decorators.js';
import type { ProjectContext } from '../../core/auth/project-context.js';
import { ApiMailErrors, MailErrorBodyDto } from '../../core/http/openapi-errors.js';
import { SendEmailBody, SendResponse } from './send.dto.js';
import { SendService } from './send.service.js';

@ApiTags('public API')
@ApiBearerAuth()
@Controller('v1/send')
export class SendController {
  constructor(private readonly sendService: SendService) {}

  @Post()
  // Up to 10 MB of attachments, base64 (4/3) in JSON; parsed only after the key is checked.
  @BodyLimit('16mb')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Send a transactional email',
    description:
      'One email per distinct recipient (at most 50 per request). With `template`, the template gives subject, body, ' +
      'from, sender name and reply-to; fields in the request override them. `{{var}}`, `{{a.b}}` and ' +
      '`{{ var ?? fallback }}` are replaced from `data` (values are HTML-escaped in the body; an unknown placeholder ' +
      'renders empty); `{{email}}` is the recipient and `{{unsubscribeUrl}}` their signed unsubscribe link. Each ' +
      'recipient becomes a contact if new (`subscribed: false` unless given). The sender address must be on a ' +
      'VERIFIED domain of the project (403 `DOMAIN_NOT_VERIFIED`), except with the development outbox (no ' +
      'MAIL_SMTP_URL and NODE_ENV not production), where any sender is accepted and its mail is written unsigned ' +
      'with an `X-Mail-Api-Unsigned` header saying why; an unknown template is 404. The answer comes ' +
      'once the emails are queued (status QUEUED); the worker delivers them at MAIL_RATE_PER_SECOND, ' +
      'transactional mail ahead of campaigns. `Idempotency-Key`: a repeat within 24 h with the same body returns ' +
      'the first answer and sends nothing; with a different body it is a 409 `IDEMPOTENCY_CONFLICT`. Requests ' +
      'larger than 16 MB are a 413; attachment limits (10 files, 10 MB decoded) are a 422. Size caps, each a 422 ' +
      '`VALIDATION_ERROR` naming the field, checked before anything is written: `data` at most 64 KB as JSON ' +
      '(`maxSerializedSize`); the subject as rendered for each recipient at most 998 characters (`maxRenderedLength`); ' +
      'the body at most 512 KB of UTF-8 as given (`maxByteLength`) and as rendered for each recipient, HTML escaping ' +
      'included (`maxRenderedSize`).',
  })
  // One optional header: the name matches the @Headers() parameter's exactly, so Swagger merges the two
  // into one entry instead of adding a second, required `idempotency-key`.
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: '1 to 255 printable ASCII characters, unique per logical send.' })
  @ApiOkResponse({ type: SendResponse })
  @ApiResponse({ status: 409, type: MailErrorBodyDto, description: '`IDEMPOTENCY_CONFLICT`: the key was used with another body.' })
  @ApiMailErrors(403, 404, 422)
  async send(
    @CurrentProject() project: ProjectContext,
    @Body() body: SendEmailBody,
    @Headers('Idempotency-Key') idempotencyKey?: string,
  ): Promise<MailSuccess<MailSendResult>> {
    return { success: true, data: await this.sendService.send(project, body, idempotencyKey) };
  }
}
