import { Body, Controller, Get, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { BodyLimit } from '@app/service-kit';
import { CurrentAuth, RequireFeatures } from '../../../core/auth/auth.decorators.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { ToolsService } from './tools.service.js';
import { ExecuteToolDto, ExecuteToolResultDto, McpToolListDto, SessionTokenQuery } from './tools.dto.js';

/** The AI tools over MCP (/ai_assistant/tools). */
@ApiTags('ai_assistant')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorDto, description: 'Not authenticated, or `invalid_session_token`.' })
@ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view, or the tool is not available to you.' })
@Controller('ai_assistant/tools')
export class ToolsController {
  constructor(private readonly tools: ToolsService) {}

  @Get()
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'The MCP tools you may use',
    description:
      'An MCP `tools/list` of a server holding exactly your tools: those of the agents whose required features you hold, ' +
      'whose own features you hold, without the mutation tools of an agent that is read-only in your tenant. Names as ' +
      'models see them (`auth__list_roles`), input schemas as JSON Schema.',
  })
  @ApiOkResponse({ type: McpToolListDto })
  list(@CurrentAuth() auth: AuthContext) {
    return this.tools.list(auth);
  }

  @Post('execute')
  @BodyLimit('64kb')
  @RequireFeatures('ai_assistant.view')
  @ApiOperation({
    summary: 'Run one MCP tool',
    description:
      'Body `{toolName, args, agentId?}`: an MCP `tools/call`. A read tool runs: 201 `{ok: true, result}`. A mutation ' +
      'tool never runs here: it previews the change and creates a pending action, 201 `{ok: true, pendingActionId}`, ' +
      'to be confirmed at /ai_assistant/ai/actions/{id}/confirm. `_sessionToken` (in `args`, or as a query parameter) ' +
      'must be a live session key of yours (else 401 `invalid_session_token`); the pending action is tied to its session. ' +
      'Arguments failing the tool’s schema are 400; an unknown tool 404; one you may not use 403.',
  })
  @ApiCreatedResponse({ type: ExecuteToolResultDto })
  @ApiBadRequestResponse({ type: ErrorDto, description: 'Invalid body or arguments.' })
  @ApiNotFoundResponse({ type: ErrorDto, description: 'Unknown tool or agent, or a target the tool cannot find.' })
  execute(@CurrentAuth() auth: AuthContext, @Body() body: ExecuteToolDto, @Query() query: SessionTokenQuery) {
    return this.tools.execute(auth, { ...body, sessionToken: query._sessionToken });
  }
}
