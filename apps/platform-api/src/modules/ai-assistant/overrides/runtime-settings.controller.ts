import { Body, Delete, Get, HttpCode, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { CurrentAuth } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_SETTINGS_MANAGE, AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import {
  ClearedDto,
  ClearRuntimeSettingsDto,
  RuntimeAllowlistDto,
  RuntimeAllowlistResponseDto,
  RuntimeSettingsDto,
  RuntimeSettingsResponseDto,
  RuntimeSettingsViewDto,
} from './runtime-settings.dto.js';
import { RuntimeSettingsService } from './runtime-settings.service.js';
import { AiSettingsController, RequireAiSettingsFeature } from './ai-settings.decorators.js';

/** The tenant's AI provider settings and provider allowlist (/ai_assistant/settings). */
@AiSettingsController('ai_assistant/settings')
export class RuntimeSettingsController {
  constructor(private readonly settings: RuntimeSettingsService) {}

  @Get()
  @RequireAiSettingsFeature(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'AI provider configuration',
    description:
      'The registered providers (`configured` when their key is set in the environment; keys are never returned) with ' +
      'their curated models, the environment’s defaults and allowlists, the tenant-wide settings row, the per-agent rows ' +
      'and the tenant’s provider allowlist.',
  })
  @ApiOkResponse({ type: RuntimeSettingsViewDto })
  get(@CurrentAuth() auth: AuthContext) {
    return this.settings.get(auth);
  }

  @Put()
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Save runtime settings',
    description:
      'Replaces the tenant-wide row (agentId omitted or null) or one agent’s row; fields left out are cleared. ' +
      '400 `provider_unknown` for an unregistered provider, `provider_not_in_env_allowlist` / `model_not_in_env_allowlist` ' +
      'outside AI_ALLOWED_PROVIDERS / AI_ALLOWED_MODELS, `invalid_url` for a baseURL that is not an http(s) URL without ' +
      'credentials, query or fragment; a baseURL other than the deployment’s own: `baseurl_not_allowlisted` outside ' +
      'AI_RUNTIME_BASEURL_ALLOWLIST (when set), `baseurl_not_allowed` for a private, loopback or link-local host in production ' +
      '(unless AI_BASEURL_ALLOW_PRIVATE=true). Such a URL never receives the deployment’s key, only the write-only `apiKey` ' +
      'stored with it (encrypted; the response says `hasApiKey`). 404 unknown agent. An action log entry (undoable).',
  })
  @ApiOkResponse({ type: RuntimeSettingsResponseDto })
  @ApiBadRequestResponse({ type: ErrorDto })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'agent not found' })
  save(@CurrentAuth() auth: AuthContext, @Body() body: RuntimeSettingsDto) {
    return this.settings.save(auth, body);
  }

  @Delete()
  @HttpCode(200)
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Clear runtime settings',
    description: 'Body {agentId}: clears that agent’s row; agentId omitted or null clears the tenant-wide row. Idempotent.',
  })
  @ApiOkResponse({ type: ClearedDto })
  clear(@CurrentAuth() auth: AuthContext, @Body() body: ClearRuntimeSettingsDto) {
    return this.settings.clear(auth, body.agentId ?? null);
  }

  @Put('allowlist')
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({
    summary: 'Save the tenant’s provider allowlist',
    description:
      'The providers (and optionally models) this tenant may use. 400 `provider_unknown`, `provider_not_in_env_allowlist`, ' +
      '`model_not_in_env_allowlist` for values outside the environment’s lists.',
  })
  @ApiOkResponse({ type: RuntimeAllowlistResponseDto })
  @ApiBadRequestResponse({ type: ErrorDto })
  saveAllowlist(@CurrentAuth() auth: AuthContext, @Body() body: RuntimeAllowlistDto) {
    return this.settings.saveAllowlist(auth, body);
  }

  @Delete('allowlist')
  @HttpCode(200)
  @RequireAiSettingsFeature(AI_ASSISTANT_SETTINGS_MANAGE)
  @ApiOperation({ summary: 'Clear the tenant’s provider allowlist', description: 'Idempotent.' })
  @ApiOkResponse({ type: ClearedDto })
  clearAllowlist(@CurrentAuth() auth: AuthContext) {
    return this.settings.clearAllowlist(auth);
  }
}
