import { Body, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_SETTINGS_MANAGE } from '../ai-assistant.declarations.js';
import { AgentOverrideController, RequireAiSettingsFeature } from './ai-settings.decorators.js';
import { AgentIdParams, PromptOverrideSavedDto, PromptOverrideViewDto, SavePromptOverrideDto } from './policy.dto.js';
import { PromptOverrideService } from './prompt-override.service.js';

/** Versioned prompt overrides of one agent (/ai_assistant/ai/agents/{agentId}/prompt-override). */
@AgentOverrideController('prompt-override')
export class PromptOverrideController {
  constructor(private readonly overrides: PromptOverrideService) {}

  @Get()
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'An agent’s prompt override and its history',
    description:
      'For the caller’s tenant and organization: `override` is the newest version (null when none), `versions` the newest 10, ' +
      'newest first. Chat uses the organization’s newest version, else the tenant-wide one (saved by a caller without organization).',
  })
  @ApiOkResponse({ type: PromptOverrideViewDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id.' })
  get(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams) {
    return this.overrides.get(auth, params.agentId);
  }

  @Post()
  @HttpCode(200)
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Save a new prompt override version',
    description:
      'Body `{sections, notes?}`. Versions are allocated monotonically per (tenant, organization, agent), also under ' +
      'concurrent saves, and never reused. Reserved policy keys (`mutationPolicy`, `readOnly`, `allowedTools`, ' +
      '`acceptedMediaTypes`, compared ignoring case, `-` and `_`) are 400 `reserved_key`. Recorded in the action log.',
  })
  @ApiOkResponse({ type: PromptOverrideSavedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id, malformed body, or `reserved_key`.' })
  save(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams, @Body() body: SavePromptOverrideDto) {
    return this.overrides.save(auth, params.agentId, body);
  }
}
