import { Module } from '@nestjs/common';
import { AiAgentsModule } from '../agents/ai-agents.module.js';
import { AiProvidersModule } from '../providers/ai-providers.module.js';
import { ProviderKeyCipher } from './provider-key-cipher.js';
import { RuntimeAllowlistRepository } from './runtime-allowlist.repository.js';
import { RuntimeResolver } from './runtime-resolver.service.js';
import { RuntimeSettingsController } from './runtime-settings.controller.js';
import { RuntimeSettingsRepository } from './runtime-settings.repository.js';
import { RuntimeSettingsService } from './runtime-settings.service.js';

/** Per-tenant runtime settings and allowlist (/ai_assistant/settings), and the resolver chat uses. */
@Module({
  imports: [AiAgentsModule, AiProvidersModule],
  controllers: [RuntimeSettingsController],
  providers: [RuntimeSettingsService, RuntimeSettingsRepository, RuntimeAllowlistRepository, RuntimeResolver, ProviderKeyCipher],
  exports: [RuntimeResolver, RuntimeAllowlistRepository],
})
export class AiSettingsModule {}
