import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';

/** Provider ids are short slugs (`openai`); anything else cannot be registered. */
export const PROVIDER_ID_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
/** Model ids as providers spell them (`gpt-4o-mini`, `claude-sonnet-4-0`, `org/model:tag`). */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;
export const BASE_URL_MAX_LENGTH = 2048;
/** A provider key as it goes into a header: printable ASCII, no spaces. */
export const API_KEY_PATTERN = /^[\x21-\x7e]{1,1024}$/;

export class RuntimeSettingsDto {
  @ApiPropertyOptional({ nullable: true, description: 'A registered provider (`openai`, `anthropic`); null: the agent’s default.' })
  @IsOptional()
  @Matches(PROVIDER_ID_PATTERN)
  providerId?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'null: the agent’s default model for that provider.' })
  @IsOptional()
  @Matches(MODEL_ID_PATTERN)
  modelId?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    maxLength: BASE_URL_MAX_LENGTH,
    description:
      'The provider protocol’s base URL; null: the deployment’s. Another URL must match AI_RUNTIME_BASEURL_ALLOWLIST when it ' +
      'is set, may not name a private, loopback or link-local address in production (`baseurl_not_allowed`, unless ' +
      'AI_BASEURL_ALLOW_PRIVATE=true), and never receives the deployment’s key: only `apiKey`.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_LENGTH)
  baseURL?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    writeOnly: true,
    maxLength: 1024,
    description:
      'Write-only: the tenant’s own provider key, sent only to this row’s base URL, stored encrypted and never returned ' +
      '(`hasApiKey` says whether one is stored). Omitted: the stored key is kept while baseURL stays the same (a new ' +
      'baseURL drops it); null: removed.',
  })
  @IsOptional()
  @Matches(API_KEY_PATTERN, { message: 'apiKey must be 1-1024 printable ASCII characters without spaces' })
  apiKey?: string | null;

  @ApiPropertyOptional({ nullable: true, description: 'The agent these settings are for; omitted or null: the tenant-wide default.' })
  @IsOptional()
  @Matches(AGENT_ID_PATTERN)
  agentId?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    type: [String],
    description: 'Providers a chat request may switch to with `provider`; null: any the allowlists permit.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @Matches(PROVIDER_ID_PATTERN, { each: true })
  allowedOverrideProviders?: string[] | null;
}

export class ClearRuntimeSettingsDto {
  @ApiPropertyOptional({ nullable: true, description: 'Clears this agent’s row; omitted or null clears the tenant-wide default.' })
  @IsOptional()
  @Matches(AGENT_ID_PATTERN)
  agentId?: string | null;
}

export class RuntimeAllowlistDto {
  @ApiProperty({ type: [String], description: 'Providers the tenant may use; each must be inside AI_ALLOWED_PROVIDERS when set.' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(20)
  @Matches(PROVIDER_ID_PATTERN, { each: true })
  allowedProviders: string[];

  @ApiPropertyOptional({
    nullable: true,
    type: [String],
    description: 'Models the tenant may use (null: any); each must be inside AI_ALLOWED_MODELS when set.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(200)
  @Matches(MODEL_ID_PATTERN, { each: true })
  allowedModels?: string[] | null;
}

// ---- responses (OpenAPI) ------------------------------------------------------------------------

export class RuntimeSettingsResponseDto {
  @ApiProperty({ nullable: true, type: String }) agentId: string | null;
  @ApiProperty({ nullable: true, type: String }) providerId: string | null;
  @ApiProperty({ nullable: true, type: String }) modelId: string | null;
  @ApiProperty({ nullable: true, type: String }) baseURL: string | null;
  @ApiProperty({ nullable: true, type: [String] }) allowedOverrideProviders: string[] | null;
  @ApiProperty({ description: 'A key of the tenant’s own is stored with this row’s base URL (the key is never returned).' })
  hasApiKey: boolean;
  @ApiProperty() updatedAt: string;
}

export class RuntimeAllowlistResponseDto {
  @ApiProperty({ type: [String] }) allowedProviders: string[];
  @ApiProperty({ nullable: true, type: [String] }) allowedModels: string[] | null;
  @ApiProperty() updatedAt: string;
}

export class ClearedDto {
  @ApiProperty() cleared: boolean;
}

export class ProviderModelDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
}

export class ProviderSummaryDto {
  @ApiProperty() id: string;
  @ApiProperty() label: string;
  @ApiProperty({ description: 'Its key is set in the environment (keys are never returned).' }) configured: boolean;
  @ApiProperty({ description: 'The protocol’s base URL from the environment.' }) defaultBaseUrl: string;
  @ApiProperty({ type: [ProviderModelDto] }) models: ProviderModelDto[];
}

export class RuntimeDefaultsDto {
  @ApiProperty() providerId: string;
  @ApiProperty() modelId: string;
}

export class RuntimeEnvironmentDto {
  @ApiProperty({ nullable: true, type: [String], description: 'AI_ALLOWED_PROVIDERS; null: any.' }) allowedProviders: string[] | null;
  @ApiProperty({ nullable: true, type: [String], description: 'AI_ALLOWED_MODELS; null: any.' }) allowedModels: string[] | null;
  @ApiProperty({ type: [String], description: 'AI_RUNTIME_BASEURL_ALLOWLIST.' }) baseUrlAllowlist: string[];
}

export class RuntimeSettingsViewDto {
  @ApiProperty({ type: [ProviderSummaryDto] }) providers: ProviderSummaryDto[];
  @ApiProperty({ type: RuntimeDefaultsDto }) defaults: RuntimeDefaultsDto;
  @ApiProperty({ type: RuntimeEnvironmentDto }) environment: RuntimeEnvironmentDto;
  @ApiProperty({ type: RuntimeSettingsResponseDto, nullable: true, description: 'The tenant-wide row; null when none.' })
  tenantDefault: RuntimeSettingsResponseDto | null;
  @ApiProperty({ type: [RuntimeSettingsResponseDto], description: 'The per-agent rows.' }) agents: RuntimeSettingsResponseDto[];
  @ApiProperty({ type: RuntimeAllowlistResponseDto, nullable: true }) allowlist: RuntimeAllowlistResponseDto | null;
}
