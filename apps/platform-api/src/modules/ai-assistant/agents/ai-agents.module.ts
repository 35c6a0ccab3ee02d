import { Module } from '@nestjs/common';
import { RolesModule } from '../../roles/roles.module.js';
import { AgentRegistry } from './agent-registry.js';
import { AuthAccessAssistantAgent } from './builtin/auth-access-assistant.agent.js';
import { AuthAccessSummaryAgent } from './builtin/auth-access-summary.agent.js';

/**
 * The agent registry and the built-in agents. Imported by every AI assistant module (actions, policy,
 * tools, chat); it imports none of them.
 */
@Module({
  imports: [RolesModule],
  providers: [AgentRegistry, AuthAccessAssistantAgent, AuthAccessSummaryAgent],
  exports: [AgentRegistry],
})
export class AiAgentsModule {}
