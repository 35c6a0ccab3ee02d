import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { isNonPublicHost } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition } from '../agents/agent-definition.js';
import { AiProviderRegistry } from '../providers/ai-provider-registry.js';
import { baseUrlAllowed, normalizeBaseUrl, parseBaseUrl } from './base-url-allowlist.js';
import { ProviderKeyCipher } from './provider-key-cipher.js';
import { RuntimeErrors } from './runtime-errors.js';
import type { RuntimeAllowlist } from '../overrides/runtime-allowlist.repository.js';
import { RuntimeSettingsRepository, type RuntimeSettings, type RuntimeSettingsForRun } from '../overrides/runtime-settings.repository.js';

/** A turn's overrides (chat query `provider`, `model`, `baseUrl`). */
export interface RuntimeOverrides {
  provider?: string;
  model?: string;
  baseUrl?: string;
}

export interface ResolvedRuntime {
  providerId: string;
  modelId: string;
  /** null: the provider's base URL from the environment (the deployment's own, the only one its key goes to). */
  baseUrl: string | null;
  /** A key the tenant stored with the chosen base URL; null: the deployment's key at its own URL, no key elsewhere. */
  tenantApiKey: string | null;
}

type MergedSettings = Pick<RuntimeSettings, 'providerId' | 'modelId' | 'baseURL' | 'allowedOverrideProviders'> & {
  /** The row the base URL (null included) comes from: its stored key goes with that URL only. */
  endpointRow: RuntimeSettingsForRun | null;
};

/** A choice on its way: the base URL as chosen (maybe the deployment's own, spelled out) and the row whose key may go with it. */
interface Choice {
  providerId: string;
  modelId: string;
  baseUrl: string | null;
  keyRow: RuntimeSettingsForRun | null;
}

/**
 * Which provider, model and base URL a run uses: the agent's defaults, then the tenant's settings (its
 * agent row over its tenant-wide row), then the request's overrides. An agent that declares
 * allowRuntimeOverride false ignores the tenant's settings and refuses request overrides
 * (`runtime_override_disabled`). The result is checked every time: registered, configured, inside the
 * environment and tenant allowlists. A base URL other than the deployment's own must be inside
 * AI_RUNTIME_BASEURL_ALLOWLIST when set, may not name a private address in production (unless
 * AI_BASEURL_ALLOW_PRIVATE), and gets only the key the tenant stored with it, never the deployment's.
 */
@Injectable()
export class RuntimeResolver {
  constructor(
    private readonly dataSource: DataSource,
    private readonly providers: AiProviderRegistry,
    private readonly settings: RuntimeSettingsRepository,
    private readonly keys: ProviderKeyCipher,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  async resolve(scope: TenantScope, agent: AgentDefinition, overrides: RuntimeOverrides): Promise<ResolvedRuntime> {
    const requested = overrides.provider !== undefined || overrides.model !== undefined || overrides.baseUrl !== undefined;
    if (!agent.allowRuntimeOverride) {
      if (requested) throw RuntimeErrors.runtimeOverrideDisabled(agent.id);
      return this.checked(scope, { providerId: agent.defaultProvider, modelId: agent.defaultModel, baseUrl: null, keyRow: null }, null);
    }
    const rows = await this.settings.forRun(this.dataSource, scope, agent.id);
    const allowlist = rows.allowlist;
    const merged = mergeSettings(rows.agent, rows.tenant);
    const providerId = merged.providerId ?? agent.defaultProvider;
    let choice: Choice = {
      providerId,
      modelId: merged.modelId ?? this.defaultModelFor(agent, providerId),
      baseUrl: merged.baseURL,
      keyRow: merged.endpointRow,
    };
    if (requested) choice = this.applyOverrides(agent, choice, overrides, merged);
    return this.checked(scope, choice, allowlist);
  }

  /** Whether `baseUrl` is a deployment's own base URL (of `providerId`, or of any provider). */
  isDeploymentBaseUrl(baseUrl: string, providerId?: string): boolean {
    const ids = providerId === undefined ? this.providers.list().map((p) => p.id) : [providerId];
    return ids.some((id) => {
      const own = this.providers.deploymentBaseUrl(id);
      return own !== null && sameBaseUrl(own, baseUrl);
    });
  }

  /** The model used with a provider when none is chosen: the agent's for its provider, else the provider's first curated one. */
  defaultModelFor(agent: AgentDefinition, providerId: string): string {
    if (providerId === agent.defaultProvider) return agent.defaultModel;
    if (providerId === this.providers.defaults.providerId) return this.providers.defaults.modelId;
    return this.providers.list().find((p) => p.id === providerId)?.models[0]?.id ?? agent.defaultModel;
  }

  private applyOverrides(agent: AgentDefinition, choice: Choice, overrides: RuntimeOverrides, merged: MergedSettings): Choice {
    let next = { ...choice };
    if (overrides.provider !== undefined) {
      if (!this.providers.isRegistered(overrides.provider)) throw RuntimeErrors.providerUnknown(overrides.provider);
      if (merged.allowedOverrideProviders && !merged.allowedOverrideProviders.includes(overrides.provider)) {
        throw RuntimeErrors.providerNotAllowed(overrides.provider);
      }
      if (overrides.provider !== choice.providerId) {
        // The tenant's base URL belongs to the provider it was set for.
        next = { providerId: overrides.provider, modelId: this.defaultModelFor(agent, overrides.provider), baseUrl: null, keyRow: null };
      }
    }
    if (overrides.model !== undefined) next.modelId = overrides.model;
    if (overrides.baseUrl !== undefined) {
      const url = parseBaseUrl(overrides.baseUrl);
      if (!url) throw RuntimeErrors.invalidBaseUrl('baseUrl');
      const requestedUrl = normalizeBaseUrl(url);
      // The stored key belongs to the stored URL: another URL gets none.
      const storedUrl = next.baseUrl ?? this.providers.deploymentBaseUrl(next.providerId);
      if (storedUrl === null || !sameBaseUrl(storedUrl, requestedUrl)) next.keyRow = null;
      next.baseUrl = requestedUrl;
    }
    return next;
  }

  private checked(scope: TenantScope, choice: Choice, allowlist: Omit<RuntimeAllowlist, 'updatedAt'> | null): ResolvedRuntime {
    const { providerId, modelId } = choice;
    const baseUrl = choice.baseUrl !== null && this.isDeploymentBaseUrl(choice.baseUrl, providerId) ? null : choice.baseUrl;
    if (!this.providers.isRegistered(providerId)) throw RuntimeErrors.providerUnknown(providerId);
    if (!this.providers.envAllowsProvider(providerId)) throw RuntimeErrors.providerNotInEnvAllowlist(providerId);
    if (!this.providers.envAllowsModel(modelId)) throw RuntimeErrors.modelNotInEnvAllowlist(modelId);
    if (allowlist && !allowlist.allowedProviders.includes(providerId)) throw RuntimeErrors.providerNotAllowed(providerId);
    if (allowlist?.allowedModels && !allowlist.allowedModels.includes(modelId)) throw RuntimeErrors.modelNotAllowed(modelId);
    if (baseUrl !== null) this.assertBaseUrlAllowed(baseUrl);
    if (!this.providers.isConfigured(providerId)) throw RuntimeErrors.providerNotConfigured(providerId);
    return { providerId, modelId, baseUrl, tenantApiKey: this.tenantKeyOf(scope, choice.keyRow) };
  }

  private tenantKeyOf(scope: TenantScope, row: RuntimeSettingsForRun | null): string | null {
    if (!row?.apiKeySealed) return null;
    return this.keys.open(row.apiKeySealed, { tenantId: scope.tenantId, agentId: row.agentId, baseURL: row.baseURL });
  }

  /**
   * For a base URL other than the deployment's own: 400 `baseurl_not_allowlisted` when
   * AI_RUNTIME_BASEURL_ALLOWLIST is set and the URL is outside it; in production (without
   * AI_BASEURL_ALLOW_PRIVATE) 400 `baseurl_not_allowed` when its host is a private IP literal or a
   * localhost name. A name that resolves to a private address is refused when the socket connects.
   */
  assertBaseUrlAllowed(baseUrl: string): void {
    const url = parseBaseUrl(baseUrl);
    if (!url) throw RuntimeErrors.invalidBaseUrl('baseUrl');
    const allowlist = this.config.aiBaseUrlAllowlist;
    if (allowlist.length > 0 && !baseUrlAllowed(allowlist, url)) throw RuntimeErrors.baseUrlNotAllowlisted();
    if (this.providers.refusesPrivateBaseUrls && isNonPublicHost(url.hostname)) throw RuntimeErrors.baseUrlNotAllowed();
  }
}

/** Equal as base URLs (scheme and host case, default port and trailing slashes aside). */
function sameBaseUrl(a: string, b: string): boolean {
  const [x, y] = [parseBaseUrl(a), parseBaseUrl(b)];
  return x !== null && y !== null && normalizeBaseUrl(x) === normalizeBaseUrl(y);
}

/** The agent's row over the tenant-wide row, field by field. */
function mergeSettings(agent: RuntimeSettingsForRun | null, tenant: RuntimeSettingsForRun | null): MergedSettings {
  const endpointRow = agent && (agent.baseURL !== null || agent.providerId) ? agent : tenant;
  return {
    providerId: agent?.providerId ?? tenant?.providerId ?? null,
    modelId: agent?.modelId ?? (agent?.providerId ? null : (tenant?.modelId ?? null)),
    baseURL: endpointRow?.baseURL ?? null,
    allowedOverrideProviders: agent?.allowedOverrideProviders ?? tenant?.allowedOverrideProviders ?? null,
    endpointRow,
  };
}
