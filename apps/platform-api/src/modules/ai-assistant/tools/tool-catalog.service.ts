import { Injectable } from '@nestjs/common';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import { type AgentDefinition, type AgentTool, modelToolName } from '../agents/agent-definition.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { MutationPolicyService } from '../overrides/mutation-policy.service.js';
import { allowedTools } from './tool-gate.js';

/** A tool the caller may use, with the agent it is used through and its name as models see it. */
export interface CatalogEntry {
  agent: AgentDefinition;
  tool: AgentTool;
  modelName: string;
}

/**
 * The tools a caller may use: `allowedTools` of each agent whose required features it holds. A tool
 * declared by several agents is offered once, through the first of them (or the one named).
 */
@Injectable()
export class ToolCatalogService {
  constructor(
    private readonly registry: AgentRegistry,
    private readonly policies: MutationPolicyService,
  ) {}

  async forCaller(auth: AuthContext, options: { agentId?: string } = {}): Promise<CatalogEntry[]> {
    const agents = this.registry
      .list()
      .filter((agent) => (options.agentId ? agent.id === options.agentId : true) && auth.can(...agent.requiredFeatures));
    const entries = new Map<string, CatalogEntry>();
    for (const agent of agents) {
      // The policy is only read when it could hide something.
      const policy = agent.tools.some((tool) => tool.kind === 'mutation')
        ? await this.policies.effective(scopeOf(auth), agent.id)
        : 'confirm-required';
      for (const tool of allowedTools(agent, auth, policy)) {
        const modelName = modelToolName(tool.name);
        if (!entries.has(modelName)) entries.set(modelName, { agent, tool, modelName });
      }
    }
    return [...entries.values()];
  }

  /**
   * The caller's entry for a tool named either way (`auth.list_roles` or `auth__list_roles`): 404 for
   * a tool no agent declares (or an unknown agent), 403 for one the caller may not use.
   */
  async find(auth: AuthContext, input: { toolName: string; agentId?: string }): Promise<CatalogEntry> {
    if (input.agentId) this.registry.getOrThrow(input.agentId);
    const modelName = modelToolName(input.toolName);
    const entry = (await this.forCaller(auth, { agentId: input.agentId })).find((e) => e.modelName === modelName);
    if (entry) return entry;
    const declared = this.registry
      .list()
      .filter((agent) => !input.agentId || agent.id === input.agentId)
      .some((agent) => agent.tools.some((tool) => modelToolName(tool.name) === modelName));
    if (!declared) throw DomainError.notFound('tool not found');
    throw DomainError.forbidden(`tool ${input.toolName} is not available to you (features or the agent’s mutation policy)`);
  }
}
