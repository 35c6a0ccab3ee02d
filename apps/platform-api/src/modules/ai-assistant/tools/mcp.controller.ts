import type { IncomingMessage, ServerResponse } from 'node:http';
import { Body, Controller, Delete, Get, Header, Headers, Post, Req, Res } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiAcceptedResponse,
  ApiBody,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { SchemaObject } from '@nestjs/swagger';
import { BodyLimit, DomainError, Public } from '@app/service-kit';
import { ErrorDto } from '../../../core/http/common.dto.js';
import { McpServerService } from './mcp-server.service.js';

/**
 * What POST answers with 200 (JSON-RPC 2.0 as the MCP SDK's transport writes it, JSON responses on):
 * a response with `result` or `error` (`id` null only when the request's id could not be read).
 */
const JSON_RPC_RESPONSE_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['jsonrpc', 'id'],
  properties: {
    jsonrpc: { type: 'string', enum: ['2.0'] },
    id: { oneOf: [{ type: 'string' }, { type: 'number' }], nullable: true },
    result: { type: 'object', additionalProperties: true },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
    },
  },
  oneOf: [{ required: ['result'] }, { required: ['error'] }],
};
const JSON_RPC_ANSWER_SCHEMA: SchemaObject = { oneOf: [JSON_RPC_RESPONSE_SCHEMA, { type: 'array', items: JSON_RPC_RESPONSE_SCHEMA }] };

/** 405: no server-initiated stream (GET) and no session to end (DELETE) on a stateless server. */
const notAllowed = () => new DomainError('method_not_allowed', 'this MCP server is stateless: POST only', { status: 405 });

/**
 * POST /ai_assistant/mcp (MCP Streamable HTTP). The request and response go to the SDK's transport as
 * node's own http objects (the same under any Nest adapter); authentication is the service's, because
 * MCP clients send a session key, which the route guard does not know.
 */
@ApiTags('ai_assistant')
@ApiBearerAuth()
@Controller('ai_assistant/mcp')
export class McpController {
  constructor(private readonly mcp: McpServerService) {}

  @Post()
  @Public()
  @BodyLimit('64kb')
  @ApiOperation({
    summary: 'MCP server (Streamable HTTP, stateless, JSON responses)',
    description:
      'A Model Context Protocol endpoint for external AI clients. `Authorization: Bearer <session key>` (POST ' +
      '/ai_assistant/session-key) or a JWT; needs ai_assistant.view. `tools/list` answers your tools (as GET ' +
      '/ai_assistant/tools); `tools/call` runs a read tool (its result as JSON text) and turns a mutation tool into a ' +
      'pending action (`{pendingActionId}`), which never runs until you confirm it.',
  })
  @ApiBody({ schema: { type: 'object', description: 'A JSON-RPC 2.0 message or batch.' } })
  @ApiOkResponse({ description: 'The JSON-RPC response; an array of them for a batch.', schema: JSON_RPC_ANSWER_SCHEMA })
  @ApiAcceptedResponse({ description: 'No body: the message held only notifications or responses.' })
  @ApiUnauthorizedResponse({ type: ErrorDto, description: 'No, or no live, session key or token.' })
  @ApiForbiddenResponse({ type: ErrorDto, description: 'Missing ai_assistant.view.' })
  async post(
    @Headers('authorization') authorization: string | undefined,
    @Req() req: IncomingMessage,
    @Res() res: ServerResponse,
    @Body() body: unknown,
  ): Promise<void> {
    const caller = await this.mcp.caller(authorization);
    await this.mcp.handle(caller, req, res, body);
  }

  @Get()
  @Public()
  @Header('Allow', 'POST')
  @ApiOperation({ summary: 'Not offered (stateless server): 405, after the same authentication as POST (401 first)' })
  @ApiResponse({ status: 405, type: ErrorDto, description: 'Always, once authenticated: never a 2xx.' })
  @ApiUnauthorizedResponse({ type: ErrorDto, description: 'No, or no live, session key or token.' })
  async get(@Headers('authorization') authorization: string | undefined): Promise<never> {
    // Authenticated first, like every non-public route: a stranger learns nothing, not even the 405.
    await this.mcp.caller(authorization);
    throw notAllowed();
  }

  @Delete()
  @Public()
  @Header('Allow', 'POST')
  @ApiOperation({ summary: 'Not offered (stateless server): 405, after the same authentication as POST (401 first)' })
  @ApiResponse({ status: 405, type: ErrorDto, description: 'Always, once authenticated: never a 2xx.' })
  @ApiUnauthorizedResponse({ type: ErrorDto, description: 'No, or no live, session key or token.' })
  async remove(@Headers('authorization') authorization: string | undefined): Promise<never> {
    // Authenticated first, like every non-public route: a stranger learns nothing, not even the 405.
    await this.mcp.caller(authorization);
    throw notAllowed();
  }
}
