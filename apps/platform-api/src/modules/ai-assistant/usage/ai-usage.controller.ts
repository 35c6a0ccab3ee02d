import { Controller, Get, Param, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_SETTINGS_MANAGE } from '../ai-assistant.declarations.js';
import { DailyUsageListDto, DailyUsageQuery, SessionUsageEventsDto, SessionUsagePageDto, SessionUsageQuery } from './ai-usage.dto.js';
import { AiUsageService } from './ai-usage.service.js';

@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.settings.manage.' })
@ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid query or path parameters.' })
@Controller('ai_assistant/usage')
export class AiUsageController {
  constructor(private readonly usage: AiUsageService) {}

  @Get('daily')
  @RequireFeatures(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Daily token usage',
    description:
      'Rollup rows per (UTC day, agent, model) of the caller’s tenant (and organizations, for a restricted caller): ' +
      '{day, agentId, modelId, providerIds, steps, sessions, inputTokens, outputTokens, totalTokens}, ordered by day. ' +
      'Computed from the per-step rows at read time.',
  })
  @ApiOkResponse({ type: DailyUsageListDto })
  daily(@CurrentAuth() auth: AuthContext, @Query() query: DailyUsageQuery) {
    return this.usage.daily(auth, query);
  }

  @Get('sessions')
  @RequireFeatures(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Usage per session',
    description:
      'Session summaries {sessionId, userId, agentIds, modelIds, startedAt, lastStepAt, steps, inputTokens, outputTokens, ' +
      'totalTokens}, most recently active first, with {total, limit, offset}. limit 1-100.',
  })
  @ApiOkResponse({ type: SessionUsagePageDto })
  sessions(@CurrentAuth() auth: AuthContext, @Query() query: SessionUsageQuery) {
    return this.usage.sessions(auth, query);
  }

  @Get('sessions/:sessionId')
  @RequireFeatures(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'The steps of one session',
    description:
      'Up to 200 per-step rows ordered by createdAt then stepIndex. 400 when sessionId is not a UUID, 404 when the tenant has none.',
  })
  @ApiOkResponse({ type: SessionUsageEventsDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'session not found' })
  session(@CurrentAuth() auth: AuthContext, @Param('sessionId') sessionId: string) {
    return this.usage.session(auth, sessionId);
  }
}
