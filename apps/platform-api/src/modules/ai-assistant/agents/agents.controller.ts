import { Controller, Get, Param } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { AgentListDto, AgentModelsDto } from './agents.dto.js';
import { AgentsService } from './agents.service.js';

@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@Controller('ai_assistant/ai/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Get()
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'List agents',
    description:
      'The agents declared in code whose required features the caller holds: id (`module.agent`), label, description, ' +
      'executionMode, requiredFeatures, code-declared mutationPolicy, allowRuntimeOverride, default provider and model, ' +
      'acceptedMediaTypes and tools (name, kind, description).',
  })
  @ApiOkResponse({ type: AgentListDto })
  list(@CurrentAuth() auth: AuthContext) {
    return this.agents.list(auth);
  }

  @Get(':agentId/models')
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'Providers and models selectable for an agent',
    description:
      'Providers whose key is configured (and inside AI_ALLOWED_PROVIDERS and the tenant allowlist) with their curated ' +
      'models; the agent’s default provider and model are flagged (`isDefault`) and always listed. An empty providers list ' +
      'when the agent declares allowRuntimeOverride false.',
  })
  @ApiOkResponse({ type: AgentModelsDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'invalid agent id' })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'agent not found' })
  models(@CurrentAuth() auth: AuthContext, @Param('agentId') agentId: string) {
    return this.agents.models(auth, agentId);
  }
}
