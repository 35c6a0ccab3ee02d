import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPreconditionFailedResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { PendingActionConfirmService } from './pending-action-confirm.service.js';
import { CancelPendingActionDto, ConfirmResultDto, PendingActionDto, StrictBodyPipe } from './pending-actions.dto.js';
import { PendingActionsService } from './pending-actions.service.js';

/** Pending AI actions (/ai_assistant/ai/actions/{id}): read, cancel, confirm. */
@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiNotFoundResponse({
  type: ErrorDto,
  description: 'No such action in the caller’s tenant, or another user’s (super administrators excepted).',
})
@Controller('ai_assistant/ai/actions/:id')
export class PendingActionsController {
  constructor(
    private readonly actions: PendingActionsService,
    private readonly confirmation: PendingActionConfirmService,
  ) {}

  @Get()
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'A pending action',
    description:
      'Only its creator (or a super administrator of the tenant) sees it; for anyone else it does not exist (404). ' +
      'Never carries the stored input, the creator or the idempotency key.',
  })
  @ApiOkResponse({ type: PendingActionDto })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view.' })
  get(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    return this.actions.get(auth, id);
  }

  @Post('cancel')
  @HttpCode(200)
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'Cancel a pending action',
    description:
      'pending -> cancelled, event `ai.action.cancelled`; the tool never runs. Repeating it answers the cancelled action ' +
      '(200, no second event). Past `expiresAt`: the action becomes `expired`, 409 `expired`. Any other status: 409 ' +
      '`invalid_status`. Optional body `{reason}` (at most 500 characters); unknown fields are 400.',
  })
  @ApiBody({ type: CancelPendingActionDto, required: false })
  @ApiOkResponse({ type: PendingActionDto, description: 'The action, status `cancelled`.' })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Unknown body field, or a reason over 500 characters.' })
  @ApiConflictResponse({ type: ErrorDto, description: '`expired` or `invalid_status`.' })
  cancel(@CurrentAuth() auth: AuthContext, @Param('id') id: string, @Body(new StrictBodyPipe(CancelPendingActionDto)) body: unknown) {
    return this.actions.cancel(auth, id, (body as CancelPendingActionDto).reason ?? null);
  }

  @Post('confirm')
  @HttpCode(200)
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'Confirm a pending action: run its tool once',
    description:
      'Checks in order: status, expiry, agent registration (404), the agent’s required features, the mutation policy ' +
      '(read-only: 403), the tool whitelist and its features (403), attachments in the tenant (403), the record version ' +
      '(412 `stale_version`), the input schema (412 `schema_drift`). Then pending -> executing in one conditional UPDATE: ' +
      'of concurrent confirms one runs the tool, the others wait for its outcome (up to 5 s, else 409 ' +
      '`confirmation_in_progress`) and answer it. The tool’s result is stored (`confirmed`, `ai.action.confirmed`); a ' +
      'tool that throws gives `failed` with `executionResult.error {code, message}` (`ai.action.failed`, `ok: false`). ' +
      'A repeated confirm of a confirmed or failed action answers the stored result without running the tool. ' +
      '409 `expired` past `expiresAt`, 409 `invalid_status` for a cancelled action. A confirm whose process crashed holds ' +
      'the action only for its lease (AI_PENDING_ACTION_LEASE_SECONDS, renewed while the tool runs): the worker then makes ' +
      'it `pending` again when the tool never started, or `failed` with `executionResult.error.code` `interrupted` when it ' +
      'may have run, so `confirmation_in_progress` never lasts.',
  })
  @ApiOkResponse({ type: ConfirmResultDto })
  @ApiForbiddenResponse({
    type: ErrorDto,
    description: 'Missing features, tool not allowed, read-only policy, attachment outside the tenant.',
  })
  @ApiConflictResponse({ type: ErrorDto, description: '`expired`, `invalid_status` or `confirmation_in_progress`.' })
  @ApiPreconditionFailedResponse({ type: ErrorDto, description: '`stale_version` or `schema_drift`.' })
  confirm(@CurrentAuth() auth: AuthContext, @Param('id') id: string) {
    return this.confirmation.confirm(auth, id);
  }
}
