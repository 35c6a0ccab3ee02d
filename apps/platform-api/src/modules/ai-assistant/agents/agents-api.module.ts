import { Module } from '@nestjs/common';
import { AiProvidersModule } from '../providers/ai-providers.module.js';
import { AiSettingsModule } from '../settings/ai-settings.module.js';
import { AgentLoopOverrideController } from './agent-loop-override.controller.js';
import { AgentLoopOverrideRepository } from './agent-loop-override.repository.js';
import { AgentLoopOverrideService } from './agent-loop-override.service.js';
import { AgentsController } from './agents.controller.js';
import { AgentsService } from './agents.service.js';
import { AiAgentsModule } from './ai-agents.module.js';

/**
 * The agents' HTTP side (/ai_assistant/ai/agents: list, models, loop override). Kept apart from
 * AiAgentsModule, which every AI module imports and which therefore imports none of them.
 */
@Module({
  imports: [AiAgentsModule, AiProvidersModule, AiSettingsModule],
  controllers: [AgentsController, AgentLoopOverrideController],
  providers: [AgentsService, AgentLoopOverrideService, AgentLoopOverrideRepository],
  exports: [AgentLoopOverrideService],
})
export class AiAgentsApiModule {}
