import { DomainError } from '@app/service-kit';
import type { AgentDefinition } from './agent-definition.js';
import { AGENT_ID_PATTERN, type AgentRegistry } from './agent-registry.js';

/** An agent named in a path or query: 400 when the id is not `module.agent`, 404 when no agent has it. */
export function agentOrThrow(registry: AgentRegistry, agentId: string): AgentDefinition {
  if (!AGENT_ID_PATTERN.test(agentId)) throw DomainError.badRequest('invalid agent id: expected module.agent');
  const agent = registry.get(agentId);
  if (!agent) throw DomainError.notFound('agent not found');
  return agent;
}
