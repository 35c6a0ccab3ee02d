import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { CommandDefinition } from '../../../core/audit/command.js';
import { CommandBus } from '../../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf, systemScope, type TenantScope } from '../../../core/scope/tenant-scope.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { AI_SETTINGS_MANAGE } from './mutation-policy.service.js';
import { PromptOverrideRepository, type PromptOverrideVersion } from './prompt-override.repository.js';

/** How many versions GET answers (platform-api.md "Limits": newest 10). */
export const PROMPT_OVERRIDE_HISTORY = 10;

/**
 * Policy keys a prompt override may not carry (platform-api.md): policy lives in code and in the
 * mutation-policy override, never in prompt text a tenant edits. Compared without case, `-` or `_`.
 */
export const RESERVED_PROMPT_KEYS = ['mutationPolicy', 'readOnly', 'allowedTools', 'acceptedMediaTypes'] as const;

const normalizeKey = (key: string) => key.replace(/[-_\s]/g, '').toLowerCase();
const RESERVED = new Map(RESERVED_PROMPT_KEYS.map((key) => [normalizeKey(key), key]));

export interface PromptOverrideView {
  agentId: string;
  override: PromptOverrideVersion | null;
  versions: PromptOverrideVersion[];
}

type SaveInput = { agentId: string; organizationId: string | null; sections: Record<string, string>; notes: string | null };
type Saved = { ok: true; version: number; updatedAt: string };

/**
 * Versioned prompt overrides per (tenant, organization, agent) (GET/POST
 * /ai_assistant/ai/agents/{agentId}/prompt-override). A save appends a version (a command: an action
 * log entry; versions are history, so it is not undone); the newest version is the one in effect.
 */
@Injectable()
export class PromptOverrideService {
  private readonly saveCommand: CommandDefinition<SaveInput, Saved> = {
    id: 'ai_assistant.prompt_override.save',
    label: 'Save AI agent prompt override',
    actionType: 'create',
    resourceKind: 'ai_assistant.prompt_override',
    features: [AI_SETTINGS_MANAGE],
    snapshotScope: (auth) => ({ tenantId: auth.tenantId }),
    snapshot: async (tx, id, options) => {
      if (!options?.tenantId) return null;
      const saved = await this.repository.findById(tx, systemScope(options.tenantId), id);
      return saved ? { ...saved } : null;
    },
    execute: async (tx, auth, input) => {
      const saved = await this.repository.insertNextVersion(tx, scopeOf(auth), input);
      return { resourceId: saved.id, result: { ok: true, version: saved.version, updatedAt: saved.updatedAt } };
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly repository: PromptOverrideRepository,
    @Optional() private readonly bus?: CommandBus,
  ) {}

  async get(auth: AuthContext, agentId: string): Promise<PromptOverrideView> {
    const agent = this.registry.getOrThrow(agentId);
    const versions = await this.repository.listVersions(this.dataSource, scopeOf(auth), {
      organizationId: auth.organizationId,
      agentId: agent.id,
      limit: PROMPT_OVERRIDE_HISTORY,
    });
    return { agentId: agent.id, override: versions[0] ?? null, versions };
  }

  async save(auth: AuthContext, agentId: string, input: { sections: Record<string, string>; notes?: string | null }): Promise<Saved> {
    const agent = this.registry.getOrThrow(agentId);
    const reserved = Object.keys(input.sections).flatMap((key) => {
      const hit = RESERVED.get(normalizeKey(key));
      return hit ? [key] : [];
    });
    if (reserved.length > 0) {
      throw new DomainError('reserved_key', `prompt override contains reserved policy keys: ${reserved.join(', ')}`, { status: 400 });
    }
    if (!this.bus) throw new Error('prompt overrides are saved through the API, which runs the command bus');
    return this.bus.execute(auth, this.saveCommand, {
      agentId: agent.id,
      organizationId: auth.organizationId,
      sections: input.sections,
      notes: input.notes?.trim() || null,
    });
  }

  /**
   * The sections of the override in effect for an agent run (chat and run-object merge them over the
   * agent's own): the newest version of the caller's organization, else the tenant-wide one; null when
   * there is none. `organizationId`: the caller's (`auth.organizationId`); null reads the tenant-wide one.
   */
  async currentSections(scope: TenantScope, agentId: string, organizationId: string | null = null): Promise<Record<string, string> | null> {
    const found = await this.repository.findEffective(this.dataSource, scope, { organizationId, agentId });
    return found?.sections ?? null;
  }
}
