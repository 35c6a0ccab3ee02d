import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ExecutionMode } from '../agents/agent-definition.js';

// ---- responses (OpenAPI) of chat, run-object, route and health -----------------------------------

const EXECUTION_MODES: ExecutionMode[] = ['chat', 'object'];

/** The UI message stream (AI SDK protocol, SSE frames): not JSON, documented by its content type. */
export const UI_MESSAGE_STREAM_CONTENT = { 'text/event-stream': { schema: { type: 'string' } } };

export class TokenUsageDto {
  @ApiProperty({ type: 'integer' }) inputTokens: number;
  @ApiProperty({ type: 'integer' }) outputTokens: number;
  @ApiProperty({ type: 'integer' }) totalTokens: number;
}

export class RunObjectResultDto {
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The model’s JSON, valid against the agent’s schema.' })
  object: unknown;
  @ApiPropertyOptional({ type: TokenUsageDto }) usage?: TokenUsageDto;
  @ApiPropertyOptional() finishReason?: string;
}

export class RouteCandidateDto {
  @ApiProperty() agentId: string;
  @ApiProperty({ enum: EXECUTION_MODES }) executionMode: ExecutionMode;
  @ApiProperty() score: number;
}

export class RouteResultDto {
  @ApiProperty({ type: String, nullable: true, description: 'null: the caller may use no agent.' }) agentId: string | null;
  @ApiProperty({ enum: EXECUTION_MODES, nullable: true }) executionMode: ExecutionMode | null;
  @ApiProperty({ type: [RouteCandidateDto] }) candidates: RouteCandidateDto[];
}

export class ProviderHealthDto {
  @ApiProperty() id: string;
  @ApiProperty() configured: boolean;
  @ApiProperty() isDefault: boolean;
  @ApiProperty({ type: Boolean, nullable: true, description: 'null: not configured, so not probed.' }) reachable: boolean | null;
}

export class RuntimeHealthDto {
  @ApiProperty() defaultProvider: string;
  @ApiProperty() defaultModel: string;
  @ApiProperty({ type: [ProviderHealthDto] }) providers: ProviderHealthDto[];
}

export class ToolProtocolHealthDto {
  @ApiProperty({ enum: ['mcp'] }) protocol: 'mcp';
  @ApiProperty() protocolVersion: string;
  @ApiProperty({ enum: ['ok', 'error'] }) status: 'ok' | 'error';
  @ApiProperty({ type: 'integer', description: 'Tools the caller may use.' }) tools: number;
}

export class AssistantHealthDto {
  @ApiProperty({ enum: ['ok', 'degraded'] }) status: 'ok' | 'degraded';
  @ApiProperty({ type: RuntimeHealthDto }) runtime: RuntimeHealthDto;
  @ApiProperty({ type: ToolProtocolHealthDto }) toolProtocol: ToolProtocolHealthDto;
}
