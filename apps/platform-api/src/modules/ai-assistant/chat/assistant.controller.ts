import { Body, Controller, Get, Header, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { DomainError } from '@app/service-kit';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { AssistantHealthService } from './assistant-health.service.js';
import { AssistantRouterService } from './assistant-router.service.js';
import { AssistantHealthDto, RouteResultDto, UI_MESSAGE_STREAM_CONTENT } from './chat-responses.dto.js';
import { AssistantChatDto, RouteQueryDto } from './chat.dto.js';
import { ChatService } from './chat.service.js';
import {
  UI_STREAM_BUFFERING_HEADER,
  UI_STREAM_CACHE_HEADER,
  UI_STREAM_PROTOCOL_HEADER,
  uiMessageStreamBody,
} from './ui-message-stream.response.js';

@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated.' })
@ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view.' })
@Controller('ai_assistant')
export class AssistantController {
  constructor(
    private readonly chat: ChatService,
    private readonly router: AssistantRouterService,
    private readonly healthService: AssistantHealthService,
  ) {}

  @Post('chat')
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @Header(...UI_STREAM_PROTOCOL_HEADER)
  @Header(...UI_STREAM_CACHE_HEADER)
  @Header(...UI_STREAM_BUFFERING_HEADER)
  @ApiOperation({
    summary: 'Message the assistant (streamed)',
    description:
      'Body {message} or {messages: [{role, content}]}, optional agent and sessionId. Without agent, the chat agent ' +
      'POST /ai_assistant/route picks for the last user message answers (404 when the caller may use none). The answer ' +
      'is the same UI message stream as POST /ai_assistant/ai/chat, with status 201, under the agent’s default ' +
      'provider selection and loop limits.',
  })
  @ApiProduces('text/event-stream')
  @ApiCreatedResponse({ description: 'The UI message stream (SSE frames).', content: UI_MESSAGE_STREAM_CONTENT })
  @ApiBadRequestResponse({ type: ErrorDto })
  async message(@CurrentAuth() auth: AuthContext, @Body() body: AssistantChatDto) {
    const messages = body.messages ?? (body.message ? [{ role: 'user' as const, content: body.message }] : null);
    if (!messages) throw DomainError.badRequest('message or messages is required');
    let agentId = body.agent;
    if (!agentId) {
      const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
      agentId = this.router.route(auth, lastUser, { mode: 'chat' }).agentId ?? undefined;
      if (!agentId) throw DomainError.notFound('no agent available to handle this message');
    }
    return uiMessageStreamBody(await this.chat.open(auth, { agentId, messages, sessionId: body.sessionId }));
  }

  @Post('route')
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'Route a query to a handler',
    description:
      'Body {query}. Picks the agent for the query among those whose features the caller holds, by the words of the ' +
      'query found in each agent’s id, label, description and tools (no model call): {agentId, executionMode, ' +
      'candidates: [{agentId, executionMode, score}]}; agentId null when the caller may use no agent.',
  })
  @ApiCreatedResponse({ type: RouteResultDto })
  @ApiBadRequestResponse({ type: ErrorDto })
  route(@CurrentAuth() auth: AuthContext, @Body() body: RouteQueryDto) {
    return this.router.route(auth, body.query);
  }

  @Get('health')
  @RequireFeatures(AI_ASSISTANT_VIEW)
  @ApiOperation({
    summary: 'AI runtime and tool protocol status',
    description:
      '{status: ok|degraded, runtime {defaultProvider, defaultModel, providers [{id, configured, isDefault, reachable}]}, ' +
      'toolProtocol {protocol: mcp, protocolVersion, status, tools}}. Configured providers are probed with an ' +
      'unauthenticated GET {baseURL}/models (cached 30 s); the tools are listed through the MCP client.',
  })
  @ApiOkResponse({ type: AssistantHealthDto })
  health(@CurrentAuth() auth: AuthContext) {
    return this.healthService.health(auth);
  }
}
