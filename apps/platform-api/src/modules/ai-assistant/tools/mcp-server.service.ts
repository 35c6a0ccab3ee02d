import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, type CallToolResult, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '@app/service-kit';
import { AccessAuthenticator } from '../../../core/auth/access-authenticator.service.js';
import { AccessCacheService } from '../../../core/auth/access-cache.service.js';
import { AccessTokenVerifier } from '../../../core/auth/access-token-verifier.js';
import { AclResolverService } from '../../../core/auth/acl-resolver.service.js';
import { duringAuthentication } from '../../../core/auth/auth-lookup.js';
import { AuthContext } from '../../../core/auth/auth-context.js';
import { AI_ASSISTANT_VIEW } from '../ai-assistant.declarations.js';
import { SessionKeysService } from './session-keys.service.js';
import { ToolCatalogService } from './tool-catalog.service.js';
import { ToolsService } from './tools.service.js';

/** Who calls the MCP server, and the session its pending actions are tied to (the session key's). */
export interface McpCaller {
  auth: AuthContext;
  sessionId: string | null;
}

/**
 * POST /ai_assistant/mcp: the AI tools as a Model Context Protocol server over Streamable HTTP, for
 * external clients (Claude Desktop, Cursor, any MCP client). Stateless: each request gets a fresh
 * server and transport (JSON responses), so any instance answers any request.
 *
 * The caller authenticates with `Authorization: Bearer <session key>` (POST /ai_assistant/session-key)
 * or a user's JWT; never with the browser cookie. `tools/list` is GET /ai_assistant/tools; `tools/call`
 * goes through ToolsService like /tools/execute: a read tool's result as JSON text, a mutation tool only
 * ever a pending action.
 */
@Injectable()
export class McpServerService {
  private readonly logger = new Logger(McpServerService.name);

  constructor(
    private readonly tools: ToolsService,
    private readonly catalog: ToolCatalogService,
    private readonly sessionKeys: SessionKeysService,
    private readonly tokens: AccessTokenVerifier,
    private readonly authenticator: AccessAuthenticator,
    private readonly cache: AccessCacheService,
    private readonly acl: AclResolverService,
  ) {}

  /** 401 without a live session key or JWT, 403 without `ai_assistant.view`. */
  async caller(authorization: string | undefined): Promise<McpCaller> {
    const [scheme, token] = (authorization ?? '').trim().split(/\s+/, 2);
    if (!token || scheme.toLowerCase() !== 'bearer') throw DomainError.unauthorized('unauthorized');
    const caller = SessionKeysService.isSessionKey(token) ? await this.bySessionKey(token) : await this.byJwt(token);
    if (!caller.auth.can(AI_ASSISTANT_VIEW)) throw DomainError.forbidden(`missing required features: ${AI_ASSISTANT_VIEW}`);
    return caller;
  }

  /** Answers one MCP message (or batch) on the response. */
  async handle(caller: McpCaller, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = new Server({ name: 'platform-api', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => this.tools.list(caller.auth));
    server.setRequestHandler(CallToolRequestSchema, (request) => this.call(caller, request.params.name, request.params.arguments));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.once('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  private async call(caller: McpCaller, name: string, args: unknown): Promise<CallToolResult> {
    try {
      const entry = await this.catalog.find(caller.auth, { toolName: name });
      const output = await this.tools.call(caller.auth, entry, args ?? {}, caller.sessionId);
      return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
    } catch (err) {
      if (err instanceof DomainError && err.status < 500) return { content: [{ type: 'text', text: err.message }], isError: true };
      this.logger.error({ err: (err as Error).message, tool: name }, 'MCP tool call failed');
      return { content: [{ type: 'text', text: 'the tool failed' }], isError: true };
    }
  }

  private async bySessionKey(token: string): Promise<McpCaller> {
    const owner = await this.sessionKeys.owner(token);
    if (!owner) throw DomainError.unauthorized('invalid or expired session key');
    const acl = await duringAuthentication(() =>
      this.cache.getAcl(owner.userId, owner.tenantId, () => this.acl.resolve(owner.userId, owner.tenantId)),
    );
    return { auth: new AuthContext(owner.userId, owner.tenantId, owner.organizationId, owner.sessionId, acl), sessionId: owner.sessionId };
  }

  private async byJwt(token: string): Promise<McpCaller> {
    const claims = this.tokens.verify(token);
    if (!claims) throw DomainError.unauthorized('unauthorized');
    return { auth: await this.authenticator.contextOf(claims), sessionId: null };
  }
}
