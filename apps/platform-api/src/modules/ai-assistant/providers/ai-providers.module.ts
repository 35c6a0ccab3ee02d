import { Module } from '@nestjs/common';
import { AiProviderRegistry } from './ai-provider-registry.js';

/** The AI providers (the `ai` SDK's OpenAI-compatible and Anthropic providers) and their configuration. */
@Module({
  providers: [AiProviderRegistry],
  exports: [AiProviderRegistry],
})
export class AiProvidersModule {}
