import { Logger } from '@nestjs/common';
import { type Schema, tool, type ToolSet, type UIMessageStreamWriter, zodSchema } from 'ai';
import { DomainError } from '@app/service-kit';
import type { PendingActionsService } from '../actions/pending-actions.service.js';
import { type AgentTool, modelToolName, type MutationTool, type ReadTool } from '../agents/agent-definition.js';
import { allowedTools } from '../tools/tool-gate.js';
import { ToolExecutionError } from './ai-error-messages.js';
import type { PreparedRun } from './agent-run.service.js';

const logger = new Logger('ChatTools');

/**
 * Each tool's input schema as the SDK takes it, built once: its JSON Schema (sent to the model on every
 * turn) is then converted from zod once per process instead of once per turn.
 */
const inputSchemas = new WeakMap<AgentTool, Schema<unknown>>();

export function sdkInputSchema(agentTool: AgentTool): Schema<unknown> {
  let schema = inputSchemas.get(agentTool);
  if (!schema) {
    schema = zodSchema(agentTool.inputSchema) as Schema<unknown>;
    inputSchemas.set(agentTool, schema);
  }
  return schema;
}

/** What the tools of one run share: the tool-call budget. */
export interface ToolBudget {
  used: number;
  readonly max: number;
}

/** What the model is told a mutation became: it did not run, the user must confirm it. */
export interface PendingConfirmation {
  status: 'pending_confirmation';
  pendingActionId: string;
  message: string;
}

/** The `data-mutation-preview` part (decisions.md "Chat stream"). */
export interface MutationPreviewData {
  pendingActionId: string;
  toolName: string;
  targetEntityType: string;
  targetRecordId: string;
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
}

/** A tool's failure as the model (and the stream's `tool-output-error`) sees it: domain messages only. */
function toolFailure(err: unknown, toolName: string): Error {
  if (err instanceof ToolExecutionError) return err;
  if (err instanceof DomainError) return new ToolExecutionError(err.message);
  logger.error({ err: (err as Error).message, tool: toolName }, 'tool failed');
  return new ToolExecutionError('the tool failed');
}

/**
 * The tools the run offers: the tool gate (`allowedTools`) with the policy the run has already read,
 * narrowed by the loop override's active tools. None when the turn may call no tool.
 */
export function usableTools(run: PreparedRun): AgentTool[] {
  const active = run.limits.activeTools;
  if (run.limits.maxToolCalls === 0) return [];
  return allowedTools(run.agent, run.auth, run.policy).filter((t) => !active || active.includes(t.name));
}

/**
 * The run's tools for the `ai` SDK under their model names (`auth__list_roles`). A read tool runs; a
 * mutation tool never does: it previews, stores a pending action, writes a `data-mutation-preview`
 * part and tells the model that confirmation is pending.
 */
export function chatTools(
  run: PreparedRun,
  deps: { writer: UIMessageStreamWriter; actions: PendingActionsService; budget: ToolBudget },
): ToolSet {
  const tools: ToolSet = {};
  for (const agentTool of usableTools(run)) {
    const execute = agentTool.kind === 'read' ? readExecutor(run, agentTool) : mutationExecutor(run, agentTool, deps);
    tools[modelToolName(agentTool.name)] = tool({
      description: agentTool.description,
      inputSchema: sdkInputSchema(agentTool),
      execute: async (input: unknown) => {
        deps.budget.used += 1;
        if (deps.budget.used > deps.budget.max) throw new ToolExecutionError('tool call limit of this turn reached');
        try {
          return await execute(input);
        } catch (err) {
          throw toolFailure(err, agentTool.name);
        }
      },
    });
  }
  return tools;
}

function readExecutor(run: PreparedRun, readTool: ReadTool<unknown, unknown>) {
  return (input: unknown) => readTool.run({ auth: run.auth }, input);
}

function mutationExecutor(
  run: PreparedRun,
  mutation: MutationTool<unknown, unknown>,
  deps: { writer: UIMessageStreamWriter; actions: PendingActionsService },
) {
  return async (input: unknown): Promise<PendingConfirmation> => {
    const { action, preview } = await deps.actions.propose(run.auth, {
      agent: run.agent,
      tool: mutation,
      input,
      sessionId: run.sessionId,
      attachmentIds: run.attachmentIds,
    });
    const data: MutationPreviewData = {
      pendingActionId: action.id,
      toolName: mutation.name,
      targetEntityType: preview.targetEntityType,
      targetRecordId: preview.targetRecordId,
      fieldDiff: preview.fieldDiff,
    };
    deps.writer.write({ type: 'data-mutation-preview', id: action.id, data });
    return {
      status: 'pending_confirmation',
      pendingActionId: action.id,
      message: 'Not applied yet: the change waits for the user to confirm it. Tell the user a confirmation is pending.',
    };
  };
}
