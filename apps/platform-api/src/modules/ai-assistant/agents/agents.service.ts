import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import { AiProviderRegistry } from '../providers/ai-provider-registry.js';
import { RuntimeAllowlistRepository } from '../overrides/runtime-allowlist.repository.js';
import type { AgentDefinition, ExecutionMode, MutationPolicy } from './agent-definition.js';
import { AgentRegistry } from './agent-registry.js';

export interface AgentSummary {
  id: string;
  label: string;
  description: string;
  executionMode: ExecutionMode;
  requiredFeatures: string[];
  mutationPolicy: MutationPolicy;
  allowRuntimeOverride: boolean;
  defaultProvider: string;
  defaultModel: string;
  acceptedMediaTypes: string[];
  tools: { name: string; kind: 'read' | 'mutation'; description: string; destructive?: boolean }[];
}

export interface AgentModels {
  agentId: string;
  allowRuntimeOverride: boolean;
  defaultProvider: string;
  defaultModel: string;
  providers: { id: string; label: string; isDefault: boolean; models: { id: string; label: string; isDefault: boolean }[] }[];
}

function summary(agent: AgentDefinition): AgentSummary {
  return {
    id: agent.id,
    label: agent.label,
    description: agent.description,
    executionMode: agent.executionMode,
    requiredFeatures: agent.requiredFeatures,
    mutationPolicy: agent.mutationPolicy,
    allowRuntimeOverride: agent.allowRuntimeOverride,
    defaultProvider: agent.defaultProvider,
    defaultModel: agent.defaultModel,
    acceptedMediaTypes: agent.acceptedMediaTypes,
    tools: agent.tools.map((tool) => ({
      name: tool.name,
      kind: tool.kind,
      description: tool.description,
      ...(tool.kind === 'mutation' ? { destructive: tool.destructive } : {}),
    })),
  };
}

/** The agent catalogue (/ai_assistant/ai/agents) and each agent's selectable models. */
@Injectable()
export class AgentsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly providers: AiProviderRegistry,
    private readonly allowlists: RuntimeAllowlistRepository,
  ) {}

  /** Only the agents whose required features the caller holds. */
  list(auth: AuthContext): { agents: AgentSummary[] } {
    return {
      agents: this.registry
        .list()
        .filter((agent) => auth.can(...agent.requiredFeatures))
        .map(summary),
    };
  }

  /**
   * Providers with a key configured (inside the environment's and the tenant's allowlists) and their
   * curated models; the agent's default model is always listed under its provider. None when the agent
   * does not allow runtime overrides.
   */
  async models(auth: AuthContext, agentId: string): Promise<AgentModels> {
    const agent = this.registry.getOrThrow(agentId, { checkFormat: true });
    const base = {
      agentId: agent.id,
      allowRuntimeOverride: agent.allowRuntimeOverride,
      defaultProvider: agent.defaultProvider,
      defaultModel: agent.defaultModel,
    };
    if (!agent.allowRuntimeOverride) return { ...base, providers: [] };
    const allowlist = await this.allowlists.find(this.dataSource, scopeOf(auth));
    const modelAllowed = (id: string) =>
      this.providers.envAllowsModel(id) && (!allowlist?.allowedModels || allowlist.allowedModels.includes(id));
    const providers = this.providers
      .list()
      .filter((p) => p.configured && this.providers.envAllowsProvider(p.id) && (!allowlist || allowlist.allowedProviders.includes(p.id)))
      .map((p) => {
        const isDefault = p.id === agent.defaultProvider;
        const curated =
          isDefault && !p.models.some((m) => m.id === agent.defaultModel)
            ? [{ id: agent.defaultModel, label: agent.defaultModel }, ...p.models]
            : p.models;
        const models = curated
          .filter((m) => modelAllowed(m.id))
          .map((m) => ({ ...m, isDefault: isDefault && m.id === agent.defaultModel }));
        return { id: p.id, label: p.label, isDefault, models };
      });
    return { ...base, providers };
  }
}
