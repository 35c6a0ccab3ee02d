import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { CommandDefinition, RestorePlan } from '../../../core/audit/command.js';
import { CommandBus } from '../../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf, type TenantScope } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition, MutationPolicy } from '../agents/agent-definition.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { tenantOverrideCommand } from './tenant-override-command.js';
import { isEscalation, mostRestrictive } from './mutation-policy.js';
import { MutationPolicyRepository, type MutationPolicyOverride } from './mutation-policy.repository.js';

export const AI_SETTINGS_MANAGE = 'ai_assistant.settings.manage';

export interface MutationPolicyView {
  agentId: string;
  codeDeclared: MutationPolicy;
  override: MutationPolicyOverride | null;
}

export type MutationPolicyCleared = { ok: true; agentId: string; codeDeclared: MutationPolicy; override: null; cleared: boolean };

type SaveInput = { agentId: string; mutationPolicy: MutationPolicy; notes: string | null };

/** 400 `escalation_not_allowed`: an override less restrictive than the agent's code-declared policy. */
function escalationError(agent: AgentDefinition, requested: MutationPolicy): DomainError {
  return new DomainError(
    'escalation_not_allowed',
    `mutation policy ${requested} is less restrictive than ${agent.id}'s code-declared ${agent.mutationPolicy}`,
    { status: 400 },
  );
}

/**
 * Per-tenant mutation-policy overrides (GET/POST/DELETE /ai_assistant/ai/agents/{agentId}/mutation-policy).
 * An override may only tighten the code-declared policy. Saves and clears are commands (action log
 * entries, undoable); the command's resource is the agent id, its snapshot the tenant's override row.
 */
@Injectable()
export class MutationPolicyService {
  private readonly commandBase = {
    ...tenantOverrideCommand<{ agentId: string }>({
      resourceKind: 'ai_assistant.mutation_policy',
      features: [AI_SETTINGS_MANAGE],
      targetId: (input) => input.agentId,
      read: async (tx, tenant, agentId, forUpdate) => {
        const row = await this.repository.find(tx, tenant, { agentId, forUpdate });
        return row ? { agentId: row.agentId, mutationPolicy: row.mutationPolicy, notes: row.notes, createdAt: row.createdAt } : null;
      },
      write: async (tx, tenant, agentId, snapshot) => {
        if (snapshot === null) await this.repository.delete(tx, tenant, agentId);
        else
          await this.repository.upsert(tx, tenant, {
            agentId,
            mutationPolicy: snapshot.mutationPolicy as MutationPolicy,
            notes: (snapshot.notes as string | null) ?? null,
            createdAt: snapshot.createdAt as string,
          });
      },
    }),
    authorizeRestore: (_tx: unknown, _auth: AuthContext, plan: RestorePlan) => Promise.resolve(this.authorizeRestore(plan)),
  };

  private readonly saveCommand: CommandDefinition<SaveInput, MutationPolicyView & { ok: true }> = {
    ...this.commandBase,
    id: 'ai_assistant.mutation_policy.save',
    label: 'Save AI agent mutation policy',
    actionType: 'edit',
    execute: async (tx, auth, input) => {
      const agent = this.registry.getOrThrow(input.agentId);
      const override = await this.repository.upsert(tx, scopeOf(auth), input);
      return { resourceId: agent.id, result: { ok: true, agentId: agent.id, codeDeclared: agent.mutationPolicy, override } };
    },
  };

  private readonly clearCommand: CommandDefinition<{ agentId: string }, MutationPolicyCleared> = {
    ...this.commandBase,
    id: 'ai_assistant.mutation_policy.clear',
    label: 'Clear AI agent mutation policy',
    actionType: 'delete',
    execute: async (tx, auth, input) => {
      const agent = this.registry.getOrThrow(input.agentId);
      const cleared = await this.repository.delete(tx, scopeOf(auth), agent.id);
      return { resourceId: agent.id, result: { ok: true, agentId: agent.id, codeDeclared: agent.mutationPolicy, override: null, cleared } };
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly repository: MutationPolicyRepository,
    @Optional() private readonly bus?: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus?.register(this.saveCommand, this.clearCommand);
  }

  async get(auth: AuthContext, agentId: string): Promise<MutationPolicyView> {
    const agent = this.registry.getOrThrow(agentId);
    const override = await this.repository.find(this.dataSource, scopeOf(auth), { agentId: agent.id });
    return { agentId: agent.id, codeDeclared: agent.mutationPolicy, override };
  }

  async save(auth: AuthContext, agentId: string, input: { mutationPolicy: MutationPolicy; notes?: string | null }) {
    const agent = this.registry.getOrThrow(agentId);
    if (isEscalation(agent.mutationPolicy, input.mutationPolicy)) throw escalationError(agent, input.mutationPolicy);
    return this.commandBus().execute(auth, this.saveCommand, {
      agentId: agent.id,
      mutationPolicy: input.mutationPolicy,
      notes: input.notes?.trim() || null,
    });
  }

  /** Idempotent: with no override there is nothing to record, and the answer is the same. */
  async clear(auth: AuthContext, agentId: string): Promise<MutationPolicyCleared> {
    const agent = this.registry.getOrThrow(agentId);
    const existing = await this.repository.find(this.dataSource, scopeOf(auth), { agentId: agent.id });
    if (!existing) return { ok: true, agentId: agent.id, codeDeclared: agent.mutationPolicy, override: null, cleared: false };
    return this.commandBus().execute(auth, this.clearCommand, { agentId: agent.id });
  }

  /**
   * The policy in effect for the scope's tenant (chat, tools/execute and confirm read it): the more
   * restrictive of the code-declared policy and the tenant's override. 404 for an unknown agent.
   */
  async effective(scope: TenantScope, agentId: string): Promise<MutationPolicy> {
    const agent = this.registry.getOrThrow(agentId);
    const override = await this.repository.find(this.dataSource, scope, { agentId: agent.id });
    return mostRestrictive(agent.mutationPolicy, override?.mutationPolicy ?? null);
  }

  private commandBus(): CommandBus {
    if (!this.bus) throw new Error('mutation policies are changed through the API, which runs the command bus');
    return this.bus;
  }

  /** An undo or redo brings back no override that the agent's current declaration would refuse. */
  private authorizeRestore(plan: RestorePlan): void {
    const agent = this.registry.getOrThrow(plan.resourceId);
    const target = plan.target?.mutationPolicy as MutationPolicy | undefined;
    if (target && isEscalation(agent.mutationPolicy, target)) throw escalationError(agent, target);
  }
}
