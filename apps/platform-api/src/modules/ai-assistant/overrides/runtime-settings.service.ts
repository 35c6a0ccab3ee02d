import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { CommandDefinition } from '../../../core/audit/command.js';
import { CommandBus } from '../../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import { AI_ASSISTANT_SETTINGS_MANAGE } from '../ai-assistant.declarations.js';
import { tenantOverrideCommand } from './tenant-override-command.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { AiProviderRegistry, type ProviderSummary } from '../providers/ai-provider-registry.js';
import { normalizeBaseUrl, parseBaseUrl } from '../settings/base-url-allowlist.js';
import { ProviderKeyCipher } from '../settings/provider-key-cipher.js';
import { RuntimeErrors } from '../settings/runtime-errors.js';
import { RuntimeAllowlistRepository, type RuntimeAllowlist } from './runtime-allowlist.repository.js';
import { RuntimeResolver } from '../settings/runtime-resolver.service.js';
import {
  RuntimeSettingsRepository,
  type RuntimeSettings,
  type RuntimeSettingsInput,
  type StoredKeyChange,
} from './runtime-settings.repository.js';

/** The action log's resource id of the tenant-wide settings row (agent rows use the agent id). */
const TENANT_WIDE = 'default';
const ALLOWLIST = 'allowlist';

export interface RuntimeSettingsView {
  providers: ProviderSummary[];
  defaults: { providerId: string; modelId: string };
  environment: { allowedProviders: string[] | null; allowedModels: string[] | null; baseUrlAllowlist: string[] };
  tenantDefault: RuntimeSettings | null;
  agents: RuntimeSettings[];
  allowlist: RuntimeAllowlist | null;
}

const agentIdOf = (resourceId: string): string | null => (resourceId === TENANT_WIDE ? null : resourceId);

/** PUT /ai_assistant/settings as the service takes it: the row's fields, and the write-only key. */
export type RuntimeSettingsWrite = Partial<Omit<RuntimeSettingsInput, 'apiKey'>> & {
  /** A key of the tenant's own for its base URL; omitted: the stored one is kept while the URL stays; null: none. */
  apiKey?: string | null;
};

/**
 * Per-tenant AI runtime settings (/ai_assistant/settings): a tenant-wide default and per-agent rows,
 * and the tenant's provider allowlist. Writes are commands (action log entries, undoable). The
 * deployment's keys never appear here; a key a tenant stores with its own base URL is sealed at rest
 * and never read back out (`hasApiKey` says whether there is one). Snapshots (the action log) carry
 * only `hasApiKey`: an undo can remove a key or keep the current one, never bring back a key it did
 * not record.
 */
@Injectable()
export class RuntimeSettingsService {
  private readonly settingsBase = tenantOverrideCommand<{ agentId: string | null }>({
    resourceKind: 'ai_assistant.runtime_settings',
    features: [AI_ASSISTANT_SETTINGS_MANAGE],
    targetId: (input) => input.agentId ?? TENANT_WIDE,
    read: async (tx, tenant, resourceId, forUpdate) => {
      const row = await this.settings.find(tx, tenant, { agentId: agentIdOf(resourceId), forUpdate });
      if (!row) return null;
      const { updatedAt: _updatedAt, ...snapshot } = row;
      return snapshot;
    },
    write: async (tx, tenant, resourceId, snapshot) => {
      if (snapshot === null) await this.settings.delete(tx, tenant, agentIdOf(resourceId));
      else {
        const { hasApiKey, ...row } = snapshot as unknown as Omit<RuntimeSettingsInput, 'apiKey'> & { hasApiKey?: boolean };
        await this.settings.upsert(tx, tenant, { ...row, agentId: agentIdOf(resourceId), apiKey: hasApiKey ? 'keep' : 'clear' });
      }
    },
  });

  private readonly saveCommand: CommandDefinition<RuntimeSettingsInput, RuntimeSettings> = {
    ...this.settingsBase,
    id: 'ai_assistant.runtime_settings.save',
    label: 'Save AI runtime settings',
    actionType: 'edit',
    execute: async (tx, auth, input) => ({
      resourceId: input.agentId ?? TENANT_WIDE,
      result: await this.settings.upsert(tx, scopeOf(auth), input),
    }),
  };

  private readonly clearCommand: CommandDefinition<{ agentId: string | null }, { cleared: boolean }> = {
    ...this.settingsBase,
    id: 'ai_assistant.runtime_settings.clear',
    label: 'Clear AI runtime settings',
    actionType: 'delete',
    execute: async (tx, auth, input) => ({
      resourceId: input.agentId ?? TENANT_WIDE,
      result: { cleared: await this.settings.delete(tx, scopeOf(auth), input.agentId) },
    }),
  };

  private readonly allowlistBase = tenantOverrideCommand<unknown>({
    resourceKind: 'ai_assistant.runtime_allowlist',
    features: [AI_ASSISTANT_SETTINGS_MANAGE],
    targetId: () => ALLOWLIST,
    read: async (tx, tenant, _id, forUpdate) => {
      const row = await this.allowlists.find(tx, tenant, { forUpdate });
      return row ? { allowedProviders: row.allowedProviders, allowedModels: row.allowedModels } : null;
    },
    write: async (tx, tenant, _id, snapshot) => {
      if (snapshot === null) await this.allowlists.delete(tx, tenant);
      else await this.allowlists.upsert(tx, tenant, snapshot as { allowedProviders: string[]; allowedModels: string[] | null });
    },
  });

  private readonly saveAllowlistCommand: CommandDefinition<
    { allowedProviders: string[]; allowedModels: string[] | null },
    RuntimeAllowlist
  > = {
    ...this.allowlistBase,
    id: 'ai_assistant.runtime_allowlist.save',
    label: 'Save AI provider allowlist',
    actionType: 'edit',
    execute: async (tx, auth, input) => ({ resourceId: ALLOWLIST, result: await this.allowlists.upsert(tx, scopeOf(auth), input) }),
  };

  private readonly clearAllowlistCommand: CommandDefinition<Record<string, never>, { cleared: boolean }> = {
    ...this.allowlistBase,
    id: 'ai_assistant.runtime_allowlist.clear',
    label: 'Clear AI provider allowlist',
    actionType: 'delete',
    execute: async (tx, auth) => ({ resourceId: ALLOWLIST, result: { cleared: await this.allowlists.delete(tx, scopeOf(auth)) } }),
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly agents: AgentRegistry,
    private readonly providers: AiProviderRegistry,
    private readonly settings: RuntimeSettingsRepository,
    private readonly allowlists: RuntimeAllowlistRepository,
    private readonly resolver: RuntimeResolver,
    private readonly keys: ProviderKeyCipher,
    private readonly bus: CommandBus,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {
    bus.register(this.saveCommand, this.clearCommand, this.saveAllowlistCommand, this.clearAllowlistCommand);
  }

  async get(auth: AuthContext): Promise<RuntimeSettingsView> {
    const scope = scopeOf(auth);
    const [rows, allowlist] = await Promise.all([this.settings.list(this.dataSource, scope), this.allowlists.find(this.dataSource, scope)]);
    const { allowedProviders, allowedModels } = this.config.aiRuntime;
    return {
      providers: this.providers.list(),
      defaults: this.providers.defaults,
      environment: { allowedProviders, allowedModels, baseUrlAllowlist: this.config.aiBaseUrlAllowlist },
      tenantDefault: rows.find((r) => r.agentId === null) ?? null,
      agents: rows.filter((r) => r.agentId !== null),
      allowlist,
    };
  }

  /** PUT: replaces the row (fields left out are cleared). */
  save(auth: AuthContext, input: RuntimeSettingsWrite): Promise<RuntimeSettings> {
    const agentId = input.agentId ?? null;
    if (agentId !== null) this.agents.getOrThrow(agentId);
    const providerId = input.providerId ?? null;
    if (providerId !== null) this.assertProviderUsable(providerId);
    const modelId = input.modelId ?? null;
    if (modelId !== null && !this.providers.envAllowsModel(modelId)) throw RuntimeErrors.modelNotInEnvAllowlist(modelId);
    const allowedOverrideProviders = input.allowedOverrideProviders ? [...new Set(input.allowedOverrideProviders)] : null;
    for (const id of allowedOverrideProviders ?? []) this.assertProviderUsable(id);
    const baseURL = input.baseURL == null ? null : this.checkedBaseUrl(input.baseURL);
    return this.bus.execute(auth, this.saveCommand, {
      agentId,
      providerId,
      modelId,
      baseURL,
      allowedOverrideProviders,
      apiKey: this.keyChange(auth, input.apiKey, { agentId, baseURL }),
    });
  }

  /** Idempotent: nothing to clear is `{cleared: false}` and no action log entry. */
  async clear(auth: AuthContext, agentId: string | null): Promise<{ cleared: boolean }> {
    const existing = await this.settings.find(this.dataSource, scopeOf(auth), { agentId });
    if (!existing) return { cleared: false };
    return this.bus.execute(auth, this.clearCommand, { agentId });
  }

  saveAllowlist(auth: AuthContext, input: { allowedProviders: string[]; allowedModels?: string[] | null }): Promise<RuntimeAllowlist> {
    const allowedProviders = [...new Set(input.allowedProviders)];
    for (const id of allowedProviders) this.assertProviderUsable(id);
    const allowedModels = input.allowedModels ? [...new Set(input.allowedModels)] : null;
    for (const id of allowedModels ?? []) if (!this.providers.envAllowsModel(id)) throw RuntimeErrors.modelNotInEnvAllowlist(id);
    return this.bus.execute(auth, this.saveAllowlistCommand, { allowedProviders, allowedModels });
  }

  async clearAllowlist(auth: AuthContext): Promise<{ cleared: boolean }> {
    if (!(await this.allowlists.find(this.dataSource, scopeOf(auth)))) return { cleared: false };
    return this.bus.execute(auth, this.clearAllowlistCommand, {});
  }

  private assertProviderUsable(providerId: string): void {
    if (!this.providers.isRegistered(providerId)) throw RuntimeErrors.providerUnknown(providerId);
    if (!this.providers.envAllowsProvider(providerId)) throw RuntimeErrors.providerNotInEnvAllowlist(providerId);
  }

  private keyChange(
    auth: AuthContext,
    apiKey: string | null | undefined,
    row: { agentId: string | null; baseURL: string | null },
  ): StoredKeyChange {
    if (apiKey === undefined) return 'keep';
    if (apiKey === null) return 'clear';
    return { sealed: this.keys.seal(apiKey, { tenantId: auth.tenantId, ...row }) };
  }

  private checkedBaseUrl(value: string): string {
    const url = parseBaseUrl(value.trim());
    if (!url) throw RuntimeErrors.invalidBaseUrl('baseURL');
    const normalized = normalizeBaseUrl(url);
    if (!this.resolver.isDeploymentBaseUrl(normalized)) this.resolver.assertBaseUrlAllowed(normalized);
    return normalized;
  }
}
