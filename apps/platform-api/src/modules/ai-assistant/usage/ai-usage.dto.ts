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
