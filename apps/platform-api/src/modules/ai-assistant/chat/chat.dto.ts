import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  IsUUID,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { LOOP_BOUNDS } from '../agents/agent-loop-limits.js';
import { AGENT_ID_PATTERN } from '../agents/agent-registry.js';
import { BASE_URL_MAX_LENGTH, MODEL_ID_PATTERN, PROVIDER_ID_PATTERN } from '../overrides/runtime-settings.dto.js';

/** The message-count cap of a chat turn (platform-api.md leaves it open). */
export const CHAT_MESSAGES_MAX = 100;
export const CHAT_MESSAGE_MAX_LENGTH = 32_000;
export const CHAT_ATTACHMENTS_MAX = 10;

export class ChatMessageDto {
  @ApiProperty({ enum: ['user', 'assistant'] })
  @IsIn(['user', 'assistant'])
  role: 'user' | 'assistant';

  @ApiProperty({ minLength: 1, maxLength: CHAT_MESSAGE_MAX_LENGTH })
  @IsString()
  @MinLength(1)
  @MaxLength(CHAT_MESSAGE_MAX_LENGTH)
  content: string;
}

class ConversationDto {
  @ApiProperty({ type: [ChatMessageDto], minItems: 1, maxItems: CHAT_MESSAGES_MAX, description: 'The conversation so far, oldest first.' })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CHAT_MESSAGES_MAX)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages: ChatMessageDto[];

  @ApiPropertyOptional({
    format: 'uuid',
    description: 'Groups turns in usage reports and pending actions; a new UUID per call when omitted.',
  })
  @IsOptional()
  @IsUUID()
  sessionId?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: CHAT_ATTACHMENTS_MAX,
    description: 'Attachments of the caller’s tenant the turn refers to; their media types must be accepted by the agent (409 otherwise).',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(CHAT_ATTACHMENTS_MAX)
  @IsUUID('all', { each: true })
  attachmentIds?: string[];
}

export class ChatBodyDto extends ConversationDto {}

export class ChatQuery {
  @ApiProperty({ example: 'auth.access_assistant', description: 'The agent (`module.agent`).' })
  @Matches(AGENT_ID_PATTERN, { message: 'agent must be an agent id of the form module.agent' })
  agent: string;

  @ApiPropertyOptional({ description: 'Provider for this turn (registered and configured).' })
  @IsOptional()
  @Matches(PROVIDER_ID_PATTERN)
  provider?: string;

  @ApiPropertyOptional({ description: 'Model for this turn.' })
  @IsOptional()
  @Matches(MODEL_ID_PATTERN)
  model?: string;

  @ApiPropertyOptional({
    description:
      'Base URL for this turn. Another than the deployment’s own must match AI_RUNTIME_BASEURL_ALLOWLIST when it is set, ' +
      'may not name a private address in production (`baseurl_not_allowed`), and gets no key but one the tenant stored with it.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(BASE_URL_MAX_LENGTH)
  baseUrl?: string;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: LOOP_BOUNDS.loopMaxSteps.max,
    description: 'Step budget of this turn; it can only lower the agent’s step limit.',
  })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(LOOP_BOUNDS.loopMaxSteps.max)
  loopBudget?: number;
}

export class RunObjectDto extends ConversationDto {
  @ApiProperty({ example: 'auth.access_summary', description: 'An agent declaring executionMode object.' })
  @Matches(AGENT_ID_PATTERN, { message: 'agent must be an agent id of the form module.agent' })
  agent: string;
}

export class AssistantChatDto {
  @ApiPropertyOptional({ description: 'One user message (or give `messages`).', maxLength: CHAT_MESSAGE_MAX_LENGTH })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(CHAT_MESSAGE_MAX_LENGTH)
  message?: string;

  @ApiPropertyOptional({ type: [ChatMessageDto], maxItems: CHAT_MESSAGES_MAX })
  @IsOptional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(CHAT_MESSAGES_MAX)
  @ValidateNested({ each: true })
  @Type(() => ChatMessageDto)
  messages?: ChatMessageDto[];

  @ApiPropertyOptional({ description: 'The agent; omitted: the one POST /ai_assistant/route picks for the last user message.' })
  @IsOptional()
  @Matches(AGENT_ID_PATTERN, { message: 'agent must be an agent id of the form module.agent' })
  agent?: string;

  @ApiPropertyOptional({ format: 'uuid' })
  @IsOptional()
  @IsUUID()
  sessionId?: string;
}

export class RouteQueryDto {
  @ApiProperty({ minLength: 1, maxLength: 4000, description: 'The user’s query.' })
  @IsString()
  @MinLength(1)
  @MaxLength(4000)
  query: string;
}
