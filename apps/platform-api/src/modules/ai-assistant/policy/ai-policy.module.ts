import { Module } from '@nestjs/common';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { MutationPolicyController } from './mutation-policy.controller.js';
import { MutationPolicyRepository } from './mutation-policy.repository.js';
import { MutationPolicyService } from './mutation-policy.service.js';
import { PromptOverrideController } from './prompt-override.controller.js';
import { PromptOverrideRepository } from './prompt-override.repository.js';
import { PromptOverrideService } from './prompt-override.service.js';

/**
 * Agent policies a tenant may tune: mutation-policy overrides (tighten only) and versioned prompt
 * overrides. Exports the services chat, tools and pending actions read them through.
 */
@Module({
  imports: [AiAgentsModule],
  controllers: [MutationPolicyController, PromptOverrideController],
  providers: [MutationPolicyService, MutationPolicyRepository, PromptOverrideService, PromptOverrideRepository],
  exports: [MutationPolicyService, PromptOverrideService],
})
export class AiPolicyModule {}
