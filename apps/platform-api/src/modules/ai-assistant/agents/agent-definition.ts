import type { z } from 'zod';
import { DomainError } from '@app/service-kit';
import type { AuthContext } from '../../../core/auth/auth-context.js';

/**
 * What an agent is, declared in code (decisions.md "AI assistant"). The registry holds these; chat,
 * run-object, tools/execute and pending-action confirm all read the same definition, so a rule (a
 * feature, a policy, a tool whitelist) is declared once.
 */

/** From most to least restrictive; an override may only move toward `read-only`. */
export const MUTATION_POLICIES = ['read-only', 'confirm-required', 'destructive-confirm-required'] as const;
export type MutationPolicy = (typeof MUTATION_POLICIES)[number];

export type ExecutionMode = 'chat' | 'object';

/** Who runs a tool: the caller's access (features are checked against it) in the caller's tenant. */
export interface ToolCallContext {
  auth: AuthContext;
}

/** What a mutation tool shows before it runs: the pending action's preview fields. */
export interface MutationPreview {
  targetEntityType: string;
  targetRecordId: string;
  fieldDiff: Record<string, { from: unknown; to: unknown }>;
  /** The record's version at preview time; confirm refuses (412 stale_version) when it moved. */
  recordVersion: number | null;
}

interface ToolBase<Input> {
  /** `module.tool` (e.g. `auth.list_roles`); offered to the model as `auth__list_roles`. */
  name: string;
  description: string;
  /** Validates the model's (or the caller's) arguments; also re-checked at confirm (412 schema_drift). */
  inputSchema: z.ZodType<Input>;
  /** Features the caller needs to run the tool (on top of the agent's). */
  requiredFeatures: string[];
}

export interface ReadTool<Input = unknown, Output = unknown> extends ToolBase<Input> {
  kind: 'read';
  run(context: ToolCallContext, input: Input): Promise<Output>;
}

export interface MutationTool<Input = unknown, Output = unknown> extends ToolBase<Input> {
  kind: 'mutation';
  /** Destructive mutations need confirmation even under `destructive-confirm-required`. */
  destructive: boolean;
  /** Reads the target and computes the diff; throws a DomainError (e.g. not found) when it cannot. */
  preview(context: ToolCallContext, input: Input): Promise<MutationPreview>;
  /** Runs the change (through the command bus); throws StaleVersionError when `expectedVersion` moved. */
  execute(context: ToolCallContext, input: Input, expectedVersion: number | null): Promise<Output>;
}

// Each tool narrows its own input type; the registry holds them side by side.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AgentTool = ReadTool<any, unknown> | MutationTool<any, unknown>;

export interface AgentDefinition {
  /** `module.agent`, e.g. `auth.access_assistant`. */
  id: string;
  label: string;
  description: string;
  requiredFeatures: string[];
  executionMode: ExecutionMode;
  /** The code-declared mutation policy; overrides may only be more restrictive. */
  mutationPolicy: MutationPolicy;
  /** false: provider/model/baseUrl overrides (request and tenant settings) are ignored. */
  allowRuntimeOverride: boolean;
  defaultProvider: string;
  defaultModel: string;
  /** Media types of attachments the agent accepts (empty: none). */
  acceptedMediaTypes: string[];
  /** The system prompt, in named sections a prompt override may replace (section id -> text). */
  promptSections: Record<string, string>;
  tools: AgentTool[];
  /** Object mode only: the schema run-object validates the model's JSON against. */
  objectSchema?: z.ZodType<unknown>;
  /**
   * Optional live context appended to the system prompt at each run (e.g. the caller's roles for a
   * summary), read with the caller's access. Additive member (RUNTIME).
   */
  context?(context: ToolCallContext): Promise<string>;
}

/** A mutation's target moved since its preview: confirm answers 412 `stale_version`. */
export class StaleVersionError extends DomainError {
  constructor(message = 'the record changed since the preview') {
    super('stale_version', message, { status: 412 });
    this.name = 'StaleVersionError';
  }
}

/** A tool name as the model sees it: `^[a-zA-Z0-9_-]+$` (`auth.list_roles` -> `auth__list_roles`). */
export function modelToolName(toolName: string): string {
  return toolName.replace(/\./g, '__');
}
