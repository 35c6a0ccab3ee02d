import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
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
import { ReturnsUndoTokens } from '../../../core/audit/undo-token.js';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { MutationPolicyService } from './mutation-policy.service.js';
import {
  AgentIdParams,
  MutationPolicyClearedDto,
  MutationPolicySavedDto,
  MutationPolicyViewDto,
  SaveMutationPolicyDto,
} from './policy.dto.js';

/** A tenant's mutation-policy override of one agent (/ai_assistant/ai/agents/{agentId}/mutation-policy). */
@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiNotFoundResponse({ type: ErrorDto, description: 'Unknown agent.' })
@ReturnsUndoTokens()
@Controller('ai_assistant/ai/agents/:agentId/mutation-policy')
export class MutationPolicyController {
  constructor(private readonly policies: MutationPolicyService) {}

  @Get()
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'An agent’s mutation policy',
    description:
      '`codeDeclared` is the policy the agent declares in code; `override` the tenant’s override (null when none). ' +
      'The policy in effect is the more restrictive of the two (`read-only` < `confirm-required` < `destructive-confirm-required`).',
  })
  @ApiOkResponse({ type: MutationPolicyViewDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view.' })
  get(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams) {
    return this.policies.get(auth, params.agentId);
  }

  @Post()
  @HttpCode(200)
  @RequireFeatures('ai_assistant.settings.manage')
  @ApiOperation({
    summary: 'Override an agent’s mutation policy for the tenant',
    description:
      'Body `{mutationPolicy, notes?}`. The override may only be as restrictive as the code-declared policy or more: ' +
      'anything else is 400 `escalation_not_allowed`. A save is recorded in the action log and can be undone (`X-Undo-Token`).',
  })
  @ApiOkResponse({ type: MutationPolicySavedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id, malformed body, or `escalation_not_allowed`.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.settings.manage.' })
  save(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams, @Body() body: SaveMutationPolicyDto) {
    return this.policies.save(auth, params.agentId, body);
  }

  @Delete()
  @RequireFeatures('ai_assistant.settings.manage')
  @ApiOperation({
    summary: 'Remove the tenant’s override',
    description: 'Falls back to the code-declared policy. Idempotent: `cleared` is false when there was no override.',
  })
  @ApiOkResponse({ type: MutationPolicyClearedDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid agent id.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.settings.manage.' })
  clear(@CurrentAuth() auth: AuthContext, @Param() params: AgentIdParams) {
    return this.policies.clear(auth, params.agentId);
  }
}
