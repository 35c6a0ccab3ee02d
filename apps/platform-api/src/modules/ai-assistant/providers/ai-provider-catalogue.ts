import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModel } from 'ai';
import type { FetchFunction } from './provider-endpoint-fetch.js';

export interface CuratedModel {
  id: string;
  label: string;
}

/**
 * How a provider is reached: its key (null: none is sent), its base URL, and the fetch to use (absent:
 * the global one, for the deployment's own base URL).
 */
export interface ProviderConnection {
  apiKey: string | null;
  baseURL: string;
  fetch?: FetchFunction;
}

/**
 * A provider the runtime can speak to, through the `ai` SDK. Every provider has the same shape: an id,
 * the curated models offered to users, and a factory from a connection (key, base URL) to a model.
 */
export interface AiProviderDefinition {
  id: string;
  label: string;
  models: CuratedModel[];
  create(connection: ProviderConnection): (modelId: string) => LanguageModel;
}

/** The registered providers (decisions.md "Provider configuration"). */
export const AI_PROVIDERS: AiProviderDefinition[] = [
  {
    id: 'openai',
    label: 'OpenAI (Chat Completions)',
    models: [
      { id: 'gpt-4o-mini', label: 'GPT-4o mini' },
      { id: 'gpt-4o', label: 'GPT-4o' },
      { id: 'gpt-4.1-mini', label: 'GPT-4.1 mini' },
      { id: 'gpt-4.1', label: 'GPT-4.1' },
    ],
    // The OpenAI-compatible protocol: POST {base}/chat/completions, streamed with usage, tool calls, and
    // `response_format: json_schema` for object mode (structured outputs).
    create: ({ apiKey, baseURL, fetch }) => {
      const provider = createOpenAICompatible({
        name: 'openai',
        apiKey: apiKey ?? undefined,
        baseURL,
        fetch,
        includeUsage: true,
        supportsStructuredOutputs: true,
      });
      return (modelId) => provider.chatModel(modelId);
    },
  },
  {
    id: 'anthropic',
    label: 'Anthropic (Messages)',
    models: [
      { id: 'claude-3-5-haiku-latest', label: 'Claude 3.5 Haiku' },
      { id: 'claude-sonnet-4-0', label: 'Claude Sonnet 4' },
      { id: 'claude-opus-4-0', label: 'Claude Opus 4' },
    ],
    // Without a key: an empty one, so the SDK never falls back to ANTHROPIC_API_KEY from the process
    // environment (the keyless fetch drops the header anyway).
    create: ({ apiKey, baseURL, fetch }) => {
      const provider = createAnthropic({ apiKey: apiKey ?? '', baseURL, fetch });
      return (modelId) => provider.languageModel(modelId);
    },
  },
];
