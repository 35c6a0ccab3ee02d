import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsISO8601, IsOptional, Matches, Max, Min } from 'class-validator';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';
import { MODEL_ID_PATTERN } from '../overrides/runtime-settings.dto.js';

export const SESSIONS_LIMIT_MAX = 100;
export const SESSIONS_OFFSET_MAX = 100_000;
/** Rows of GET /usage/sessions/{sessionId} (platform-api.md "Limits"). */
export const SESSION_EVENTS_MAX = 200;
/** The longest range a report covers. */
export const USAGE_RANGE_MAX_DAYS = 366;

const RANGE_DOC = 'ISO 8601 date (UTC day, `to` inclusive) or timestamp; at most 366 days.';

export class UsageRangeQuery {
  @ApiProperty({ example: '2025-01-01', description: RANGE_DOC })
  @IsISO8601({ strict: true })
  from: string;

  @ApiProperty({ example: '2025-01-31', description: RANGE_DOC })
  @IsISO8601({ strict: true })
  to: string;

  @ApiPropertyOptional({ description: 'Only this agent (`module.agent`).' })
  @IsOptional()
  @Matches(AGENT_ID_PATTERN)
  agentId?: string;
}

export class DailyUsageQuery extends UsageRangeQuery {
  @ApiPropertyOptional({ description: 'Only this model.' })
  @IsOptional()
  @Matches(MODEL_ID_PATTERN)
  modelId?: string;
}

export class SessionUsageQuery extends UsageRangeQuery {
  @ApiProperty({ minimum: 1, maximum: SESSIONS_LIMIT_MAX })
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(SESSIONS_LIMIT_MAX)
  limit: number;

  @ApiProperty({ minimum: 0, maximum: SESSIONS_OFFSET_MAX })
  @Type(() => Number)
  @IsInt()
  @Min(0)
  @Max(SESSIONS_OFFSET_MAX)
  offset: number;
}

// ---- responses (OpenAPI) ------------------------------------------------------------------------

export class DailyUsageDto {
  @ApiProperty({ example: '2025-01-01', description: 'UTC day.' }) day: string;
  @ApiProperty() agentId: string;
  @ApiProperty() modelId: string;
  @ApiProperty({ type: [String] }) providerIds: string[];
  @ApiProperty({ type: 'integer' }) steps: number;
  @ApiProperty({ type: 'integer' }) sessions: number;
  @ApiProperty({ type: 'integer' }) inputTokens: number;
  @ApiProperty({ type: 'integer' }) outputTokens: number;
  @ApiProperty({ type: 'integer' }) totalTokens: number;
}

export class DailyUsageListDto {
  @ApiProperty({ type: [DailyUsageDto], description: 'Ordered by day, agent, model.' }) items: DailyUsageDto[];
}

export class SessionUsageDto {
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true, description: 'Who sent its first step.' }) userId: string | null;
  @ApiProperty({ type: [String] }) agentIds: string[];
  @ApiProperty({ type: [String] }) modelIds: string[];
  @ApiProperty() startedAt: string;
  @ApiProperty() lastStepAt: string;
  @ApiProperty({ type: 'integer' }) steps: number;
  @ApiProperty({ type: 'integer' }) inputTokens: number;
  @ApiProperty({ type: 'integer' }) outputTokens: number;
  @ApiProperty({ type: 'integer' }) totalTokens: number;
}

export class SessionUsagePageDto {
  @ApiProperty({ type: [SessionUsageDto], description: 'Most recently active first.' }) items: SessionUsageDto[];
  @ApiProperty({ type: 'integer' }) total: number;
  @ApiProperty({ type: 'integer' }) limit: number;
  @ApiProperty({ type: 'integer' }) offset: number;
}

export class UsageEventDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) organizationId: string | null;
  @ApiProperty({ type: String, format: 'uuid', nullable: true }) userId: string | null;
  @ApiProperty() agentId: string;
  @ApiProperty() providerId: string;
  @ApiProperty() modelId: string;
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ type: 'integer' }) stepIndex: number;
  @ApiProperty({ type: 'integer' }) inputTokens: number;
  @ApiProperty({ type: 'integer' }) outputTokens: number;
  @ApiProperty({ type: 'integer' }) totalTokens: number;
  @ApiProperty({ type: String, nullable: true }) finishReason: string | null;
  @ApiProperty() createdAt: string;
}

export class SessionUsageEventsDto {
  @ApiProperty({ format: 'uuid' }) sessionId: string;
  @ApiProperty({ type: [UsageEventDto], description: `At most ${SESSION_EVENTS_MAX}, by createdAt then stepIndex.` })
  items: UsageEventDto[];
}
