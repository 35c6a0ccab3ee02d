import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';

/** A tool's name either way: `module.tool` or as models see it, `module__tool`. */
const TOOL_NAME = /^[A-Za-z0-9_.-]+$/;

// ---- requests ---------------------------------------------------------------------------------

export class ExecuteToolDto {
  @ApiProperty({ maxLength: 128, example: 'auth__list_roles', description: 'As GET /ai_assistant/tools names it, or `auth.list_roles`.' })
  @IsString()
  @MaxLength(128)
  @Matches(TOOL_NAME, { message: 'toolName may hold letters, digits, _, . and - only' })
  toolName: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'The tool’s arguments (validated by MCP against its input schema). May carry `_sessionToken` (from POST ' +
      '/ai_assistant/session-key), which is taken out before validation and ties the call to that session.',
    example: { search: 'admin' },
  })
  @IsOptional()
  @IsObject()
  args?: Record<string, unknown>;

  @ApiPropertyOptional({
    description: 'The agent to use the tool through (default: the first that offers it to you).',
    example: 'auth.access_assistant',
  })
  @IsOptional()
  @Matches(AGENT_ID_PATTERN, { message: 'agentId must be module.agent' })
  agentId?: string;
}

export class SessionTokenQuery {
  @ApiPropertyOptional({ description: 'The session token may also come as this query parameter (same rules as `args._sessionToken`).' })
  @IsOptional()
  @IsString()
  @MaxLength(100)
  _sessionToken?: string;
}

// ---- responses (OpenAPI) ----------------------------------------------------------------------

export class McpToolDto {
  @ApiProperty({ example: 'auth__list_roles', description: 'The name models see (`^[a-zA-Z0-9_-]+$`).' }) name: string;
  @ApiPropertyOptional({ example: 'auth.list_roles' }) title?: string;
  @ApiPropertyOptional() description?: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'JSON Schema of the arguments.' }) inputSchema: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'MCP tool annotations (readOnlyHint, destructiveHint).' })
  annotations?: Record<string, unknown>;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: '`{toolName, agentId, kind: read|mutation, requiresConfirmation}`.',
  })
  _meta?: Record<string, unknown>;
}

export class McpToolListDto {
  @ApiProperty({ type: [McpToolDto] }) tools: McpToolDto[];
}

export class ExecuteToolResultDto {
  @ApiProperty({ type: Boolean, example: true }) ok: true;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'A read tool’s result.' }) result?: Record<
    string,
    unknown
  >;
  @ApiPropertyOptional({ format: 'uuid', description: 'A mutation tool’s pending action (it did not run).' }) pendingActionId?: string;
}

export class SessionKeyDto {
  @ApiProperty({ example: 'aisk_3q2-…' }) sessionToken: string;
  @ApiProperty({ description: 'Two hours after creation.' }) expiresAt: string;
}
