import { Injectable } from '@nestjs/common';
import { DomainError } from '@app/service-kit';
import { type AgentDefinition, type AgentTool, modelToolName } from './agent-definition.js';
import { AuthAccessAssistantAgent } from './builtin/auth-access-assistant.agent.js';
import { AuthAccessSummaryAgent } from './builtin/auth-access-summary.agent.js';

/** `module.agent`: lower-case words joined by `_`, one dot. */
export const AGENT_ID_PATTERN = /^[a-z][a-z0-9_]{0,63}\.[a-z][a-z0-9_]{0,63}$/;

/**
 * The agents declared in code (decisions.md "AI assistant"). The built-in ones are registered at start;
 * another module adds its own with `register` from its constructor or `onModuleInit`.
 */
@Injectable()
export class AgentRegistry {
  private readonly agents = new Map<string, AgentDefinition>();

  constructor(assistant: AuthAccessAssistantAgent, summary: AuthAccessSummaryAgent) {
    this.register(assistant.definition);
    this.register(summary.definition);
  }

  register(agent: AgentDefinition): void {
    if (!AGENT_ID_PATTERN.test(agent.id)) throw new Error(`invalid agent id ${agent.id}: expected module.agent`);
    if (this.agents.has(agent.id)) throw new Error(`agent ${agent.id} is already registered`);
    this.agents.set(agent.id, agent);
  }

  /** Every registered agent, in registration order. */
  list(): AgentDefinition[] {
    return [...this.agents.values()];
  }

  get(id: string): AgentDefinition | undefined {
    return this.agents.get(id);
  }

  /**
   * The agent, or 404 `agent not found`. `checkFormat` (an id from a path or query): an id not of the
   * form `module.agent` is 400 first.
   */
  getOrThrow(id: string, options: { checkFormat?: boolean } = {}): AgentDefinition {
    if (options.checkFormat && !AGENT_ID_PATTERN.test(id)) throw DomainError.badRequest('invalid agent id: expected module.agent');
    const agent = this.agents.get(id);
    if (!agent) throw DomainError.notFound('agent not found');
    return agent;
  }

  /** The agent's tool by its name (`auth.list_roles`) or its model-facing name (`auth__list_roles`). */
  tool(agent: AgentDefinition, name: string): AgentTool | undefined {
    return agent.tools.find((tool) => tool.name === name || modelToolName(tool.name) === name);
  }
}
