import type { AuthContext } from '../../../core/auth/auth-context.js';
import type { AgentDefinition, AgentTool, MutationPolicy } from '../agents/agent-definition.js';

/**
 * The one rule of which of an agent's tools a caller may use (chat, GET /tools, /tools/execute and the
 * MCP server all apply it): the caller holds the tool's features (the agent's are checked by whoever
 * picks the agent), and no mutation tool while the agent's effective policy in the tenant is read-only.
 */
export function allowedTools(agent: AgentDefinition, auth: AuthContext, policy: MutationPolicy): AgentTool[] {
  return agent.tools.filter((tool) => auth.can(...tool.requiredFeatures) && !(tool.kind === 'mutation' && policy === 'read-only'));
}
