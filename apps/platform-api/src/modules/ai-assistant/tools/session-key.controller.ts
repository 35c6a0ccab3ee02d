import { Controller, HttpCode, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiForbiddenResponse, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { SessionKeysService } from './session-keys.service.js';
import { SessionKeyDto } from './tools.dto.js';

/** POST /ai_assistant/session-key. */
@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view.' })
@Controller('ai_assistant/session-key')
export class SessionKeyController {
  constructor(private readonly sessionKeys: SessionKeysService) {}

  @Post()
  @HttpCode(200)
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'A session key for MCP tool calls',
    description:
      'A random token (only its hash is stored), bound to you, your tenant and this login session: valid two hours, ' +
      'or until the session ends (logout, password reset), whichever comes first. Pass it as ' +
      '`_sessionToken` with POST /ai_assistant/tools/execute: the call runs with your own access (the token never ' +
      'widens it) and its pending actions are tied to the token’s session. No body.',
  })
  @ApiOkResponse({ type: SessionKeyDto })
  create(@CurrentAuth() auth: AuthContext) {
    return this.sessionKeys.create(auth);
  }
}
