import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { LanguageModel } from 'ai';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import { AI_PROVIDERS, type AiProviderDefinition, type ProviderConnection } from './ai-provider-catalogue.js';
import { ProviderEndpointFetch } from './provider-endpoint-fetch.js';

/**
 * Model instances kept per (provider, base URL, model). A model instance builds its response schemas
 * (zod) when created: reusing it keeps that, and zod's compiled parsers, off every request.
 */
const MAX_CACHED_MODELS = 256;

export interface ProviderSummary {
  id: string;
  label: string;
  configured: boolean;
  /** The protocol's base URL from the environment (a tenant or a request may choose another). */
  defaultBaseUrl: string;
  models: { id: string; label: string }[];
}

/** What a run calls: `baseUrl` null is the deployment's own; `tenantApiKey` a key the tenant stored with its URL. */
export interface ModelTarget {
  providerId: string;
  modelId: string;
  baseUrl: string | null;
  tenantApiKey: string | null;
}

/**
 * The providers registered in code and their configuration from the environment: a provider is
 * configured when its key is set (`AI_OPENAI_API_KEY`, `AI_ANTHROPIC_API_KEY`). The deployment's key
 * only ever goes to the deployment's base URL; any other base URL gets the tenant's own key or none,
 * through ProviderEndpointFetch (private targets refused in production, no redirects). Keys never
 * leave this class: callers get models, summaries and booleans.
 */
@Injectable()
export class AiProviderRegistry implements OnModuleDestroy {
  private readonly providers = new Map<string, AiProviderDefinition>(AI_PROVIDERS.map((p) => [p.id, p]));
  private readonly factories = new Map<string, (modelId: string) => LanguageModel>();
  private readonly models = new Map<string, LanguageModel>();
  private readonly endpoints = new ProviderEndpointFetch();

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

  async onModuleDestroy(): Promise<void> {
    await this.endpoints.close();
  }

  /** The deployment's own base URL of a provider (`AI_OPENAI_BASE_URL`, `AI_ANTHROPIC_BASE_URL`). */
  deploymentBaseUrl(providerId: string): string | null {
    return this.settingsOf(providerId)?.baseUrl ?? null;
  }

  /** Production without AI_BASEURL_ALLOW_PRIVATE: a base URL other than the deployment's may not reach a private address. */
  get refusesPrivateBaseUrls(): boolean {
    return this.config.env === 'production' && !this.config.aiBaseUrlAllowPrivate;
  }

  isRegistered(providerId: string): boolean {
    return this.providers.has(providerId);
  }

  isConfigured(providerId: string): boolean {
    return this.settingsOf(providerId)?.apiKey != null;
  }

  /** Allowed by `AI_ALLOWED_PROVIDERS` (unset: every provider). */
  envAllowsProvider(providerId: string): boolean {
    const allowed = this.config.aiRuntime.allowedProviders;
    return allowed === null || allowed.includes(providerId);
  }

  /** Allowed by `AI_ALLOWED_MODELS` (unset: every model). */
  envAllowsModel(modelId: string): boolean {
    const allowed = this.config.aiRuntime.allowedModels;
    return allowed === null || allowed.includes(modelId);
  }

  get defaults(): { providerId: string; modelId: string } {
    return { providerId: this.config.aiRuntime.defaultProvider, modelId: this.config.aiRuntime.defaultModel };
  }

  list(): ProviderSummary[] {
    return [...this.providers.values()].map((p) => ({
      id: p.id,
      label: p.label,
      configured: this.isConfigured(p.id),
      defaultBaseUrl: this.settingsOf(p.id)?.baseUrl ?? '',
      models: p.models.map((m) => ({ ...m })),
    }));
  }

  /** The model to call; the caller has checked the provider is registered and configured. */
  languageModel(input: ModelTarget): LanguageModel {
    const provider = this.providers.get(input.providerId);
    const settings = this.settingsOf(input.providerId);
    if (!provider || !settings?.apiKey) throw new Error(`provider ${input.providerId} is not configured`);
    const connection = this.connectionOf(input, settings);
    // The key's identity (not the key) tells cached clients apart: a tenant's key is never another's.
    const keyId = connection.apiKey === null ? 'none' : createHash('sha256').update(connection.apiKey).digest('base64url');
    const factoryKey = `${provider.id} ${connection.baseURL} ${keyId}`;
    const key = `${factoryKey} ${input.modelId}`;
    let model = this.models.get(key);
    if (!model) {
      let factory = this.factories.get(factoryKey);
      if (!factory) {
        factory = provider.create(connection);
        this.factories.set(factoryKey, factory);
      }
      model = factory(input.modelId);
      // Request-chosen base URLs and models could grow it without end: past the bound it starts over.
      if (this.models.size >= MAX_CACHED_MODELS) {
        this.models.clear();
        this.factories.clear();
      }
      this.models.set(key, model);
    }
    return model;
  }

  private connectionOf(input: ModelTarget, settings: { apiKey: string | null; baseUrl: string }): ProviderConnection {
    if (input.baseUrl === null) return { apiKey: input.tenantApiKey ?? settings.apiKey, baseURL: settings.baseUrl };
    const apiKey = input.tenantApiKey;
    const fetch = this.endpoints.fetchFor({ refusePrivate: this.refusesPrivateBaseUrls, keyless: apiKey === null });
    return { apiKey, baseURL: input.baseUrl, fetch };
  }

  private settingsOf(providerId: string): { apiKey: string | null; baseUrl: string } | undefined {
    const providers = this.config.aiRuntime.providers as Record<string, { apiKey: string | null; baseUrl: string } | undefined>;
    return Object.hasOwn(providers, providerId) ? providers[providerId] : undefined;
  }
}
