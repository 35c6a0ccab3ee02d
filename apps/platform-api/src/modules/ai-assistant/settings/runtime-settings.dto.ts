import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';

/** Provider ids are short slugs (`openai`); anything else cannot be registered. */
export const PROVIDER_ID_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;
/** Model ids as providers spell them (`gpt-4o-mini`, `claude-sonnet-4-0`, `org/model:tag`). */
export const MODEL_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/@-]{0,127}$/;
export const BASE_URL_MAX_LENGTH = 2048;

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
    description: 'The provider protocol’s base URL; must match AI_RUNTIME_BASEURL_ALLOWLIST when it is set.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_LENGTH)
  baseURL?: string | null;

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
