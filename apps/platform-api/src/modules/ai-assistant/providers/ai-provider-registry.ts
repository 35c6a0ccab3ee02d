import { Inject, Injectable } from '@nestjs/common';
import type { LanguageModel } from 'ai';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import { AI_PROVIDERS, type AiProviderDefinition } from './ai-provider-catalogue.js';

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

/**
 * The providers registered in code and their configuration from the environment: a provider is
 * configured when its key is set (`AI_OPENAI_API_KEY`, `AI_ANTHROPIC_API_KEY`). Keys never leave this
 * class: callers get models, summaries and booleans.
 */
@Injectable()
export class AiProviderRegistry {
  private readonly providers = new Map<string, AiProviderDefinition>(AI_PROVIDERS.map((p) => [p.id, p]));
  private readonly factories = new Map<string, (modelId: string) => LanguageModel>();
  private readonly models = new Map<string, LanguageModel>();

  constructor(@Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig) {}

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
  languageModel(input: { providerId: string; modelId: string; baseUrl: string | null }): LanguageModel {
    const provider = this.providers.get(input.providerId);
    const settings = this.settingsOf(input.providerId);
    if (!provider || !settings?.apiKey) throw new Error(`provider ${input.providerId} is not configured`);
    const baseURL = input.baseUrl ?? settings.baseUrl;
    const key = `${provider.id} ${baseURL} ${input.modelId}`;
    let model = this.models.get(key);
    if (!model) {
      const factoryKey = `${provider.id} ${baseURL}`;
      let factory = this.factories.get(factoryKey);
      if (!factory) {
        factory = provider.create({ apiKey: settings.apiKey, baseURL });
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

  private settingsOf(providerId: string): { apiKey: string | null; baseUrl: string } | undefined {
    const providers = this.config.aiRuntime.providers as Record<string, { apiKey: string | null; baseUrl: string } | undefined>;
    return Object.hasOwn(providers, providerId) ? providers[providerId] : undefined;
  }
}
