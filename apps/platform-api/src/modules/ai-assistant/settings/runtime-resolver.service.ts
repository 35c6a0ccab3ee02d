import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition } from '../agents/agent-definition.js';
import { AiProviderRegistry } from '../providers/ai-provider-registry.js';
import { baseUrlAllowed, normalizeBaseUrl, parseBaseUrl } from './base-url-allowlist.js';
import { RuntimeErrors } from './runtime-errors.js';
import type { RuntimeAllowlist } from './runtime-allowlist.repository.js';
import { RuntimeSettingsRepository, type RuntimeSettings } from './runtime-settings.repository.js';

/** A turn's overrides (chat query `provider`, `model`, `baseUrl`). */
export interface RuntimeOverrides {
  provider?: string;
  model?: string;
  baseUrl?: string;
}

export interface ResolvedRuntime {
  providerId: string;
  modelId: string;
  /** null: the provider's base URL from the environment. */
  baseUrl: string | null;
}

type MergedSettings = Pick<RuntimeSettings, 'providerId' | 'modelId' | 'baseURL' | 'allowedOverrideProviders'>;

/**
 * Which provider, model and base URL a run uses: the agent's defaults, then the tenant's settings (its
 * agent row over its tenant-wide row), then the request's overrides. An agent that declares
 * allowRuntimeOverride false ignores the tenant's settings and refuses request overrides
 * (`runtime_override_disabled`). The result is checked every time: registered, configured, inside the
 * environment and tenant allowlists, and a base URL inside AI_RUNTIME_BASEURL_ALLOWLIST when set.
 */
@Injectable()
export class RuntimeResolver {
  constructor(
    private readonly dataSource: DataSource,
    private readonly providers: AiProviderRegistry,
    private readonly settings: RuntimeSettingsRepository,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  async resolve(scope: TenantScope, agent: AgentDefinition, overrides: RuntimeOverrides): Promise<ResolvedRuntime> {
    const requested = overrides.provider !== undefined || overrides.model !== undefined || overrides.baseUrl !== undefined;
    if (!agent.allowRuntimeOverride) {
      if (requested) throw RuntimeErrors.runtimeOverrideDisabled(agent.id);
      return this.checked({ providerId: agent.defaultProvider, modelId: agent.defaultModel, baseUrl: null }, null);
    }
    const rows = await this.settings.forRun(this.dataSource, scope, agent.id);
    const allowlist = rows.allowlist;
    const merged = mergeSettings(rows.agent, rows.tenant);
    const providerId = merged.providerId ?? agent.defaultProvider;
    let choice: ResolvedRuntime = {
      providerId,
      modelId: merged.modelId ?? this.defaultModelFor(agent, providerId),
      baseUrl: merged.baseURL,
    };
    if (requested) choice = this.applyOverrides(agent, choice, overrides, merged);
    return this.checked(choice, allowlist);
  }

  /** The model used with a provider when none is chosen: the agent's for its provider, else the provider's first curated one. */
  defaultModelFor(agent: AgentDefinition, providerId: string): string {
    if (providerId === agent.defaultProvider) return agent.defaultModel;
    if (providerId === this.providers.defaults.providerId) return this.providers.defaults.modelId;
    return this.providers.list().find((p) => p.id === providerId)?.models[0]?.id ?? agent.defaultModel;
  }

  private applyOverrides(
    agent: AgentDefinition,
    choice: ResolvedRuntime,
    overrides: RuntimeOverrides,
    merged: MergedSettings,
  ): ResolvedRuntime {
    let next = { ...choice };
    if (overrides.provider !== undefined) {
      if (!this.providers.isRegistered(overrides.provider)) throw RuntimeErrors.providerUnknown(overrides.provider);
      if (merged.allowedOverrideProviders && !merged.allowedOverrideProviders.includes(overrides.provider)) {
        throw RuntimeErrors.providerNotAllowed(overrides.provider);
      }
      if (overrides.provider !== choice.providerId) {
        // The tenant's base URL belongs to the provider it was set for.
        next = { providerId: overrides.provider, modelId: this.defaultModelFor(agent, overrides.provider), baseUrl: null };
      }
    }
    if (overrides.model !== undefined) next.modelId = overrides.model;
    if (overrides.baseUrl !== undefined) {
      const url = parseBaseUrl(overrides.baseUrl);
      if (!url) throw RuntimeErrors.invalidBaseUrl('baseUrl');
      next.baseUrl = normalizeBaseUrl(url);
    }
    return next;
  }

  private checked(choice: ResolvedRuntime, allowlist: Omit<RuntimeAllowlist, 'updatedAt'> | null): ResolvedRuntime {
    const { providerId, modelId, baseUrl } = choice;
    if (!this.providers.isRegistered(providerId)) throw RuntimeErrors.providerUnknown(providerId);
    if (!this.providers.envAllowsProvider(providerId)) throw RuntimeErrors.providerNotInEnvAllowlist(providerId);
    if (!this.providers.envAllowsModel(modelId)) throw RuntimeErrors.modelNotInEnvAllowlist(modelId);
    if (allowlist && !allowlist.allowedProviders.includes(providerId)) throw RuntimeErrors.providerNotAllowed(providerId);
    if (allowlist?.allowedModels && !allowlist.allowedModels.includes(modelId)) throw RuntimeErrors.modelNotAllowed(modelId);
    if (baseUrl !== null) this.assertBaseUrlAllowed(baseUrl);
    if (!this.providers.isConfigured(providerId)) throw RuntimeErrors.providerNotConfigured(providerId);
    return choice;
  }

  /** 400 `baseurl_not_allowlisted` when AI_RUNTIME_BASEURL_ALLOWLIST is set and the URL is outside it. */
  assertBaseUrlAllowed(baseUrl: string): void {
    const url = parseBaseUrl(baseUrl);
    if (!url) throw RuntimeErrors.invalidBaseUrl('baseUrl');
    const allowlist = this.config.aiBaseUrlAllowlist;
    if (allowlist.length > 0 && !baseUrlAllowed(allowlist, url)) throw RuntimeErrors.baseUrlNotAllowlisted();
  }
}

/** The agent's row over the tenant-wide row, field by field. */
function mergeSettings(agent: RuntimeSettings | null, tenant: RuntimeSettings | null): MergedSettings {
  return {
    providerId: agent?.providerId ?? tenant?.providerId ?? null,
    modelId: agent?.modelId ?? (agent?.providerId ? null : (tenant?.modelId ?? null)),
    baseURL: agent?.baseURL ?? (agent?.providerId ? null : (tenant?.baseURL ?? null)),
    allowedOverrideProviders: agent?.allowedOverrideProviders ?? tenant?.allowedOverrideProviders ?? null,
  };
}
