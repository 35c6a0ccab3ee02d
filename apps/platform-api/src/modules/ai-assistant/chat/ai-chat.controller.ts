import { Body, Controller, Header, HttpCode, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { RunObjectResultDto, UI_MESSAGE_STREAM_CONTENT } from './chat-responses.dto.js';
import { ChatBodyDto, ChatQuery, RunObjectDto } from './chat.dto.js';
import { ChatService } from './chat.service.js';
import { RunObjectService } from './run-object.service.js';
import {
  UI_STREAM_BUFFERING_HEADER,
  UI_STREAM_CACHE_HEADER,
  UI_STREAM_PROTOCOL_HEADER,
  uiMessageStreamBody,
} from './ui-message-stream.response.js';

const CHAT_DESCRIPTION =
  'Runs the agent loop and streams it as the AI SDK UI message stream (`text/event-stream`, header ' +
  '`x-vercel-ai-ui-message-stream: v1`; `data: {json}` events `start` (messageMetadata {sessionId, agentId, providerId, ' +
  'modelId}), `start-step`, `text-start`, `text-delta`, `text-end`, `tool-input-available`, `tool-output-available`, ' +
  '`finish-step`, `finish`, `error`, `abort`, and `data-*` parts; last `data: [DONE]`). A mutation tool never runs here: ' +
  'it creates a pending action and the stream carries `data-mutation-preview` {pendingActionId, toolName, ' +
  'targetEntityType, targetRecordId, fieldDiff}. Limits: steps (default 8), tool calls (16), tokens (200000), wall clock ' +
  '(60 s), per agent loop override; `loopBudget` lowers the step limit for this turn. When a limit ends the loop the ' +
  'stream carries `data-loop-limit` {reason, limit}. Every model step writes a usage row. Errors before the stream: ' +
  '400 validation or `runtime_override_disabled`, `provider_unknown`, `provider_not_configured`, `baseurl_not_allowlisted`, ' +
  '`baseurl_not_allowed` (a private, loopback or link-local host in production), ' +
  '`invalid_url`, `provider_not_allowed`, `model_not_allowed`, `provider_not_in_env_allowlist`, `model_not_in_env_allowlist`; ' +
  '403 missing the agent’s features; 404 unknown agent or attachment; 409 `execution_mode_not_supported` (an object-mode ' +
  'agent) or `media_type_not_accepted`; 429 `budget_exceeded` (with Retry-After, seconds to the next UTC day) once the ' +
  'tenant or the user has used its daily token budget (AI_TENANT_DAILY_TOKENS, AI_USER_DAILY_TOKENS). Overrides of ' +
  'provider, model or baseUrl are refused (`runtime_override_disabled`) ' +
  'for an agent declaring allowRuntimeOverride false, whose tenant settings are ignored too. A baseUrl other than the ' +
  'deployment’s own never receives the deployment’s key (only a key the tenant stored with that URL), and any failure ' +
  'talking to it is the same `error` part, whether or not a host or port answered. Messages: 1-100, roles user ' +
  'and assistant, each at most 32000 characters.';

const BUDGET_EXCEEDED =
  '`budget_exceeded`: the tenant’s or the user’s daily token budget is used up; Retry-After says when the UTC day ends.';

@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view or the agent’s required features.' })
@ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid request, or a typed provider-selection code.' })
@ApiNotFoundResponse({ type: ErrorDto, description: 'agent not found' })
@Controller('ai_assistant/ai')
export class AiChatController {
  constructor(
    private readonly chat: ChatService,
    private readonly objects: RunObjectService,
  ) {}

  @Post('chat')
  @HttpCode(200)
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @Header(...UI_STREAM_PROTOCOL_HEADER)
  @Header(...UI_STREAM_CACHE_HEADER)
  @Header(...UI_STREAM_BUFFERING_HEADER)
  @ApiOperation({ summary: 'Chat with an agent (streamed)', description: CHAT_DESCRIPTION })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'The UI message stream (SSE frames).', content: UI_MESSAGE_STREAM_CONTENT })
  @ApiConflictResponse({ type: ErrorDto, description: 'Policy violation (execution mode, attachment media type).' })
  @ApiTooManyRequestsResponse({ type: ErrorDto, description: BUDGET_EXCEEDED })
  async stream(@CurrentAuth() auth: AuthContext, @Query() query: ChatQuery, @Body() body: ChatBodyDto) {
    const chat = await this.chat.open(auth, {
      agentId: query.agent,
      messages: body.messages,
      sessionId: body.sessionId,
      attachmentIds: body.attachmentIds,
      overrides: { provider: query.provider, model: query.model, baseUrl: query.baseUrl },
      loopBudget: query.loopBudget,
    });
    return uiMessageStreamBody(chat);
  }

  @Post('run-object')
  @HttpCode(200)
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'Run an object-mode agent',
    description:
      'One model call asked for JSON with the agent’s schema (`response_format: json_schema`); the answer is validated ' +
      'against it: {object, usage {inputTokens, outputTokens, totalTokens}, finishReason}. 422 ' +
      '`execution_mode_not_supported` for a chat agent; 502 `invalid_model_output` when the model’s JSON is invalid or ' +
      'does not match, 502 `provider_error` when the provider fails, 504 `wall_clock_exceeded`; 429 `budget_exceeded` as ' +
      'for chat. Writes one usage row.',
  })
  @ApiOkResponse({ type: RunObjectResultDto })
  @ApiConflictResponse({ type: ErrorDto, description: 'Policy violation (attachment media type).' })
  @ApiUnprocessableEntityResponse({ type: ErrorDto, description: 'The agent does not declare object mode.' })
  @ApiTooManyRequestsResponse({ type: ErrorDto, description: BUDGET_EXCEEDED })
  runObject(@CurrentAuth() auth: AuthContext, @Body() body: RunObjectDto) {
    return this.objects.run(auth, {
      agentId: body.agent,
      messages: body.messages,
      sessionId: body.sessionId,
      attachmentIds: body.attachmentIds,
    });
  }
}
