import { Body, Delete, Get, HttpCode, Param, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_SETTINGS_MANAGE, AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { LoopOverrideDto, LoopOverrideViewDto } from './agent-loop-override.dto.js';
import { AgentLoopOverrideService } from './agent-loop-override.service.js';
import { AgentOverrideController, RequireAiSettingsFeature } from './ai-settings.decorators.js';

/** A tenant's loop limits of one agent (/ai_assistant/ai/agents/{agentId}/loop-override). */
@AgentOverrideController(
  'loop-override',
  ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id (not `module.agent`) or invalid body.' }),
)
export class AgentLoopOverrideController {
  constructor(private readonly overrides: AgentLoopOverrideService) {}

  @Get()
  @RequireAiSettingsFeature(AI_ASSISTANT_VIEW)
  @ApiOperation({ summary: 'The tenant’s loop override of an agent', description: '{agentId, override}; override null when none is set.' })
  @ApiOkResponse({ type: LoopOverrideViewDto })
  get(@CurrentAuth() auth: AuthContext, @Param('agentId') agentId: string) {
    return this.overrides.get(auth, agentId);
  }

  @Put()
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Save the loop override of an agent',
    description:
      'Fields left out keep their value; null clears that axis. Limits: loopMaxSteps 1-50, loopMaxToolCalls 0-200, ' +
      'loopMaxWallClockMs 1000-600000, loopMaxTokens 100-5000000; each stop condition and active tool is validated ' +
      'against the agent (400 with details). Defaults: 8 steps, 16 tool calls, 60000 ms, 200000 tokens. An action log entry.',
  })
  @ApiOkResponse({ type: LoopOverrideViewDto })
  save(@CurrentAuth() auth: AuthContext, @Param('agentId') agentId: string, @Body() body: LoopOverrideDto) {
    return this.overrides.save(auth, agentId, body);
  }

  @Delete()
  @HttpCode(200)
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Clear the loop override of an agent',
    description: 'Nulls all seven loop columns; idempotent. {agentId, override: null}.',
  })
  @ApiOkResponse({ type: LoopOverrideViewDto, description: 'override is null.' })
  clear(@CurrentAuth() auth: AuthContext, @Param('agentId') agentId: string) {
    return this.overrides.clear(auth, agentId);
  }
}
