import { Injectable } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { PendingActionsService } from '../actions/pending-actions.service.js';
import { SessionKeysService } from './session-keys.service.js';
import { type CatalogEntry, ToolCatalogService } from './tool-catalog.service.js';

/** Largest number of array elements and object members one call's arguments may hold (crafted bodies). */
const MAX_TOOL_INPUT_ELEMENTS = 2000;

/** What a handler of the per-caller server reports besides its MCP result. */
interface CallState {
  sessionId: string | null;
  /** The error a handler threw, kept so the HTTP answer carries its status and code. */
  failure?: Error;
}

export type ExecuteResult = { ok: true; result: Record<string, unknown> } | { ok: true; pendingActionId: string };

/** MCP wants structured content to be an object. */
function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value: value ?? null };
}

/**
 * The AI tools over MCP (GET /ai_assistant/tools, POST /ai_assistant/tools/execute). Each request
 * builds an `McpServer` exposing exactly the caller's tools (ToolCatalogService) and talks to it
 * through the SDK's `Client` over a linked in-memory transport, so listing, argument validation and
 * calls go through the MCP protocol itself. A mutation tool never runs here: its handler previews the
 * change and stores a pending action, which the caller confirms at /ai_assistant/ai/actions/{id}/confirm.
 */
@Injectable()
export class McpToolsService {
  constructor(
    private readonly catalog: ToolCatalogService,
    private readonly actions: PendingActionsService,
    private readonly sessionKeys: SessionKeysService,
  ) {}

  async list(auth: AuthContext): Promise<{ tools: Tool[] }> {
    const entries = await this.catalog.forCaller(auth);
    return this.withClient(auth, entries, { sessionId: null }, async (client) => ({ tools: (await client.listTools()).tools }));
  }

  async execute(
    auth: AuthContext,
    input: { toolName: string; args?: Record<string, unknown>; agentId?: string; sessionToken?: string },
  ): Promise<ExecuteResult> {
    const { _sessionToken: argToken, ...args } = input.args ?? {};
    if (argToken !== undefined && typeof argToken !== 'string')
      throw DomainError.badRequest('validation failed: _sessionToken must be a string');
    if (argToken !== undefined && input.sessionToken !== undefined && argToken !== input.sessionToken) {
      throw DomainError.badRequest('two different session tokens');
    }
    const token = argToken ?? input.sessionToken;
    const sessionId = token === undefined ? null : (await this.sessionKeys.resolve(auth, token)).sessionId;
    const entry = await this.catalog.find(auth, { toolName: input.toolName, agentId: input.agentId });
    const state: CallState = { sessionId };
    const answer = await this.withClient(auth, [entry], state, (client) => client.callTool({ name: entry.modelName, arguments: args }));
    // `toolResult` is the pre-2024 result shape, which this server never produces.
    if (!('content' in answer)) throw new Error('unexpected MCP tool result');
    const result = answer as CallToolResult;
    if (result.isError) throw state.failure ?? this.protocolError(result);
    const content = asObject(result.structuredContent);
    if (entry.tool.kind === 'mutation') return { ok: true, pendingActionId: String(content.pendingActionId) };
    return { ok: true, result: content };
  }

  /** Runs `use` against a fresh server holding `entries`, and closes both ends after. */
  private async withClient<T>(
    auth: AuthContext,
    entries: CatalogEntry[],
    state: CallState,
    use: (client: Client) => Promise<T>,
  ): Promise<T> {
    const server = new McpServer(
      { name: 'platform-ai-tools', version: '1.0.0' },
      { capabilities: { tools: {} }, maxToolInputElements: MAX_TOOL_INPUT_ELEMENTS },
    );
    for (const entry of entries) this.register(server, auth, entry, state);
    const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: 'platform-api', version: '1.0.0' });
    await server.connect(serverTransport);
    try {
      await client.connect(clientTransport);
      return await use(client);
    } finally {
      await client.close();
      await server.close();
    }
  }

  private register(server: McpServer, auth: AuthContext, { agent, tool, modelName }: CatalogEntry, state: CallState): void {
    const mutation = tool.kind === 'mutation';
    server.registerTool(
      modelName,
      {
        title: tool.name,
        description: mutation ? `${tool.description} (creates a pending action the user must confirm)` : tool.description,
        inputSchema: tool.inputSchema,
        annotations: { readOnlyHint: !mutation, destructiveHint: mutation && tool.destructive, openWorldHint: false },
        _meta: { toolName: tool.name, agentId: agent.id, kind: tool.kind, requiresConfirmation: mutation },
      },
      async (input: unknown): Promise<CallToolResult> => {
        try {
          const output = await this.call(auth, { agent, tool, modelName }, input, state);
          return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
        } catch (err) {
          state.failure = err instanceof Error ? err : new Error(String(err));
          throw state.failure;
        }
      },
    );
  }

  private async call(auth: AuthContext, { agent, tool }: CatalogEntry, input: unknown, state: CallState): Promise<Record<string, unknown>> {
    if (tool.kind === 'read') return asObject(await tool.run({ auth }, input));
    const preview = await tool.preview({ auth }, input);
    const action = await this.actions.createFromTool(auth, {
      agentId: agent.id,
      toolName: tool.name,
      input,
      preview,
      sessionId: state.sessionId,
    });
    return {
      pendingActionId: action.id,
      status: action.status,
      message: 'Confirmation pending: the change runs once the user confirms it.',
    };
  }

  /** An error the MCP server produced itself (the arguments failed the tool's input schema): 400. */
  private protocolError(result: CallToolResult): DomainError {
    const text = result.content.find((part) => part.type === 'text')?.text ?? 'the tool call failed';
    return DomainError.badRequest(text.replace(/^MCP error -?\d+: /, ''));
  }
}
