import { Body, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_SETTINGS_MANAGE, AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { AgentOverrideController, RequireAiSettingsFeature } from './ai-settings.decorators.js';
import { MutationPolicyService } from './mutation-policy.service.js';
import {
  AgentIdParams,
  MutationPolicyClearedDto,
  MutationPolicySavedDto,
  MutationPolicyViewDto,
  SaveMutationPolicyDto,
} from './policy.dto.js';

/** A tenant's mutation-policy override of one agent (/ai_assistant/ai/agents/{agentId}/mutation-policy). */
@AgentOverrideController('mutation-policy')
export class MutationPolicyController {
  constructor(private readonly policies: MutationPolicyService) {}

  @Get()
  @RequireAiSettingsFeature(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'An agent’s mutation policy',
    description:
      '`codeDeclared` is the policy the agent declares in code; `override` the tenant’s override (null when none). ' +
      'The policy in effect is the more restrictive of the two (`read-only` < `confirm-required` < `destructive-confirm-required`).',
  })
  @ApiOkResponse({ type: MutationPolicyViewDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id.' })
  get(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams) {
    return this.policies.get(auth, params.agentId);
  }

  @Post()
  @HttpCode(200)
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Override an agent’s mutation policy for the tenant',
    description:
      'Body `{mutationPolicy, notes?}`. The override may only be as restrictive as the code-declared policy or more: ' +
      'anything else is 400 `escalation_not_allowed`. A save is recorded in the action log and can be undone (`X-Undo-Token`).',
  })
  @ApiOkResponse({ type: MutationPolicySavedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id, malformed body, or `escalation_not_allowed`.' })
  save(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams, @Body() body: SaveMutationPolicyDto) {
    return this.policies.save(auth, params.agentId, body);
  }

  @Delete()
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Remove the tenant’s override',
    description: 'Falls back to the code-declared policy. Idempotent: `cleared` is false when there was no override.',
  })
  @ApiOkResponse({ type: MutationPolicyClearedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id.' })
  clear(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams) {
    return this.policies.clear(auth, params.agentId);
  }
}
