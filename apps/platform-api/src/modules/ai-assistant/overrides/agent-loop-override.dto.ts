import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsBoolean, IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { LOOP_BOUNDS, STOP_CONDITIONS_MAX } from '../agents/agent-loop-limits.js';

const { loopMaxSteps, loopMaxToolCalls, loopMaxWallClockMs, loopMaxTokens } = LOOP_BOUNDS;

/** PUT body: a field left out keeps its value, null clears that axis (platform-api.md "AI agent loop override"). */
export class LoopOverrideDto {
  @ApiPropertyOptional({ nullable: true, description: 'true: one model step per turn (no agent loop).' })
  @IsOptional()
  @IsBoolean()
  loopDisabled?: boolean | null;

  @ApiPropertyOptional({ nullable: true, minimum: loopMaxSteps.min, maximum: loopMaxSteps.max })
  @IsOptional()
  @IsInt()
  @Min(loopMaxSteps.min)
  @Max(loopMaxSteps.max)
  loopMaxSteps?: number | null;

  @ApiPropertyOptional({ nullable: true, minimum: loopMaxToolCalls.min, maximum: loopMaxToolCalls.max })
  @IsOptional()
  @IsInt()
  @Min(loopMaxToolCalls.min)
  @Max(loopMaxToolCalls.max)
  loopMaxToolCalls?: number | null;

  @ApiPropertyOptional({ nullable: true, minimum: loopMaxWallClockMs.min, maximum: loopMaxWallClockMs.max, description: 'Milliseconds.' })
  @IsOptional()
  @IsInt()
  @Min(loopMaxWallClockMs.min)
  @Max(loopMaxWallClockMs.max)
  loopMaxWallClockMs?: number | null;

  @ApiPropertyOptional({
    nullable: true,
    minimum: loopMaxTokens.min,
    maximum: loopMaxTokens.max,
    description: 'Input plus output tokens of a turn.',
  })
  @IsOptional()
  @IsInt()
  @Min(loopMaxTokens.min)
  @Max(loopMaxTokens.max)
  loopMaxTokens?: number | null;

  @ApiPropertyOptional({
    nullable: true,
    maxItems: STOP_CONDITIONS_MAX,
    description:
      'Stop conditions, each validated: `{type: "stepCount", steps}` or `{type: "hasToolCall", toolName}` (one of the agent’s tools).',
    example: [{ type: 'hasToolCall', toolName: 'auth.rename_role' }],
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(STOP_CONDITIONS_MAX)
  loopStopWhenJson?: unknown[] | null;

  @ApiPropertyOptional({
    nullable: true,
    type: [String],
    description: 'The tools offered to the model; each must be one of the agent’s tools.',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @MaxLength(128, { each: true })
  loopActiveToolsJson?: string[] | null;
}

// ---- responses (OpenAPI) ------------------------------------------------------------------------

const STOP_CONDITION_SCHEMA: SchemaObject = {
  oneOf: [
    {
      type: 'object',
      required: ['type', 'steps'],
      properties: { type: { type: 'string', enum: ['stepCount'] }, steps: { type: 'integer' } },
    },
    {
      type: 'object',
      required: ['type', 'toolName'],
      properties: { type: { type: 'string', enum: ['hasToolCall'] }, toolName: { type: 'string' } },
    },
  ],
};

/** A stored override: every axis nullable (null: that axis falls back to the agent's default). */
export class LoopOverrideRowDto {
  @ApiProperty({ type: Boolean, nullable: true }) loopDisabled: boolean | null;
  @ApiProperty({ type: 'integer', nullable: true }) loopMaxSteps: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) loopMaxToolCalls: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Milliseconds.' }) loopMaxWallClockMs: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) loopMaxTokens: number | null;
  @ApiProperty({ type: 'array', items: STOP_CONDITION_SCHEMA, nullable: true }) loopStopWhenJson: unknown[] | null;
  @ApiProperty({ type: [String], nullable: true }) loopActiveToolsJson: string[] | null;
  @ApiProperty() updatedAt: string;
}

export class LoopOverrideViewDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ type: LoopOverrideRowDto, nullable: true, description: 'null: no override (or every axis cleared).' })
  override: LoopOverrideRowDto | null;
}
