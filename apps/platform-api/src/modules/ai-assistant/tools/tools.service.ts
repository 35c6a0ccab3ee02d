import { Injectable } from '@nestjs/common';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { PendingActionsService } from '../actions/pending-actions.service.js';
import { SessionKeysService } from './session-keys.service.js';
import { type CatalogEntry, ToolCatalogService } from './tool-catalog.service.js';

/** Largest number of array elements and object members one call's arguments may hold (crafted bodies). */
export const MAX_TOOL_INPUT_ELEMENTS = 2000;

export type ExecuteResult = { ok: true; result: Record<string, unknown> } | { ok: true; pendingActionId: string };

/** MCP wants structured content to be an object. */
function asObject(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value: value ?? null };
}

/** Array elements and object members, counted until `max` is passed (a crafted body stops the walk early). */
function elementCount(value: unknown, max: number): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= max) {
    const next = stack.pop();
    if (next === null || typeof next !== 'object') continue;
    const children: unknown[] = Array.isArray(next) ? (next as unknown[]) : Object.values(next);
    count += children.length;
    stack.push(...children.slice(0, max + 1));
  }
  return count;
}

/** A tool as MCP's `tools/list` describes it (GET /ai_assistant/tools and the MCP server answer the same). */
export function toolDescriptor({ agent, tool, modelName }: CatalogEntry): Tool {
  const mutation = tool.kind === 'mutation';
  return {
    name: modelName,
    title: tool.name,
    description: mutation ? `${tool.description} (creates a pending action the user must confirm)` : tool.description,
    inputSchema: toJsonSchemaCompat(tool.inputSchema, { strictUnions: true, pipeStrategy: 'input' }) as Tool['inputSchema'],
    annotations: { readOnlyHint: !mutation, destructiveHint: mutation && tool.destructive, openWorldHint: false },
    _meta: { toolName: tool.name, agentId: agent.id, kind: tool.kind, requiresConfirmation: mutation },
  };
}

/**
 * The AI tools outside chat: GET /ai_assistant/tools, POST /ai_assistant/tools/execute and the MCP
 * server (POST /ai_assistant/mcp) list and call through here. Which tools: ToolCatalogService (the tool
 * gate). A read tool runs; a mutation tool never does: it becomes a pending action (PendingActionsService
 * `propose`, as in chat), confirmed at /ai_assistant/ai/actions/{id}/confirm.
 */
@Injectable()
export class ToolsService {
  constructor(
    private readonly catalog: ToolCatalogService,
    private readonly actions: PendingActionsService,
    private readonly sessionKeys: SessionKeysService,
  ) {}

  async list(auth: AuthContext): Promise<{ tools: Tool[] }> {
    return { tools: (await this.catalog.forCaller(auth)).map(toolDescriptor) };
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
    const output = await this.call(auth, entry, args, sessionId);
    if (entry.tool.kind === 'mutation') return { ok: true, pendingActionId: String(output.pendingActionId) };
    return { ok: true, result: output };
  }

  /** One call of a tool the caller may use: arguments validated (400), then run or proposed. */
  async call(auth: AuthContext, entry: CatalogEntry, args: unknown, sessionId: string | null): Promise<Record<string, unknown>> {
    const input = this.validate(entry, args);
    const { agent, tool } = entry;
    if (tool.kind === 'read') return asObject(await tool.run({ auth }, input));
    const { action } = await this.actions.propose(auth, { agent, tool, input, sessionId });
    return {
      pendingActionId: action.id,
      status: action.status,
      message: 'Confirmation pending: the change runs once the user confirms it.',
    };
  }

  private validate({ tool, modelName }: CatalogEntry, args: unknown): unknown {
    if (elementCount(args, MAX_TOOL_INPUT_ELEMENTS) > MAX_TOOL_INPUT_ELEMENTS) {
      throw DomainError.badRequest(
        `Invalid arguments for tool ${modelName}: arguments contain more than the maximum of ${MAX_TOOL_INPUT_ELEMENTS} elements`,
      );
    }
    const parsed = tool.inputSchema.safeParse(args ?? {});
    if (!parsed.success) {
      const issues = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`).join('; ');
      throw DomainError.badRequest(`Invalid arguments for tool ${modelName}: ${issues}`);
    }
    return parsed.data;
  }
}
