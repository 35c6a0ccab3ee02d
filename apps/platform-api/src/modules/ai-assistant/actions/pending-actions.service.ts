import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../../config/platform-config.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf } from '../../../core/scope/tenant-scope.js';
import type { AgentDefinition, MutationPreview, MutationTool } from '../agents/agent-definition.js';
import { AgentRegistry } from '../agents/agent-registry.js';
import { PendingActionEvents } from './pending-action-events.js';
import { serializePendingAction, type SerializedPendingAction } from './pending-action-serializer.js';
import { type PendingActionRow, PendingActionsRepository } from './pending-actions.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Attachments one action may carry. */
const MAX_ATTACHMENTS = 20;

export interface CreatePendingActionInput {
  agentId: string;
  toolName: string;
  /** The tool's arguments; validated (and normalized) with the tool's input schema here again. */
  input: unknown;
  preview: MutationPreview;
  sessionId?: string | null;
  attachmentIds?: string[];
}

/** 409 `expired`: the action's time to live has passed (platform-api.md "Errors"). */
export function expiredError(): DomainError {
  return new DomainError('expired', 'the pending action has expired', { status: 409 });
}

/** 409 `invalid_status`: the action is no longer pending (decisions.md "Confirm failures"). */
export function invalidStatusError(status: string): DomainError {
  return new DomainError('invalid_status', `the pending action is ${status}, not pending`, { status: 409 });
}

/** JSON with object keys sorted, so equal inputs give equal idempotency keys. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Pending actions: what a mutation tool proposes from chat or tools/execute, waiting for its creator
 * (or a super administrator) to confirm or cancel it (GET, cancel here; confirm in
 * PendingActionConfirmService). Another user's action, or another tenant's, is a 404.
 */
@Injectable()
export class PendingActionsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly repository: PendingActionsRepository,
    private readonly events: PendingActionEvents,
    @Inject(PLATFORM_CONFIG) private readonly config: PlatformConfig,
  ) {}

  /**
   * Stores a mutation tool's proposal as a pending action (status `pending`, expiring after
   * `AI_PENDING_ACTION_TTL_SECONDS`) and emits `ai.action.created`. The same proposal (user, agent,
   * tool, input and session) while the first is still pending answers that action, its preview refreshed.
   */
  /**
   * The one way a mutation tool call becomes a pending action (chat, /tools/execute and the MCP server):
   * the tool previews the change with the caller's access, and the action is stored; the tool never runs.
   */
  async propose(
    auth: AuthContext,
    input: {
      agent: AgentDefinition;
      tool: MutationTool<unknown, unknown>;
      input: unknown;
      sessionId: string | null;
      attachmentIds?: string[];
    },
  ): Promise<{ action: SerializedPendingAction; preview: MutationPreview }> {
    const preview = await input.tool.preview({ auth }, input.input);
    const action = await this.createFromTool(auth, {
      agentId: input.agent.id,
      toolName: input.tool.name,
      input: input.input,
      preview,
      sessionId: input.sessionId,
      attachmentIds: input.attachmentIds,
    });
    return { action, preview };
  }

  async createFromTool(auth: AuthContext, input: CreatePendingActionInput): Promise<SerializedPendingAction> {
    const agent = this.registry.getOrThrow(input.agentId);
    const tool = this.registry.tool(agent, input.toolName);
    if (!tool || tool.kind !== 'mutation') throw DomainError.badRequest(`${input.toolName} is no mutation tool of ${agent.id}`);
    const normalizedInput = this.normalize(tool, input.input);
    const sessionId = input.sessionId ?? null;
    if (sessionId !== null && !UUID.test(sessionId)) throw DomainError.badRequest('the session id must be a UUID');
    const attachmentIds = [...new Set(input.attachmentIds ?? [])];
    if (attachmentIds.length > MAX_ATTACHMENTS || attachmentIds.some((attachmentId) => !UUID.test(attachmentId))) {
      throw DomainError.badRequest(`attachment ids must be at most ${MAX_ATTACHMENTS} UUIDs`);
    }
    const idempotencyKey = createHash('sha256')
      .update(canonicalJson({ userId: auth.userId, agentId: agent.id, tool: tool.name, input: normalizedInput, sessionId, attachmentIds }))
      .digest('base64url');
    const scope = scopeOf(auth);
    const { row, inserted, expired } = await this.dataSource.transaction(async (tx) => {
      const expiredRows: PendingActionRow[] = [];
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expiredRows.push(...(await this.repository.expireByKey(tx, scope, idempotencyKey)));
        const saved = await this.repository.insertOrReuse(tx, scope, {
          organizationId: auth.organizationId,
          agentId: agent.id,
          toolName: tool.name,
          targetEntityType: input.preview.targetEntityType,
          targetRecordId: input.preview.targetRecordId,
          fieldDiff: input.preview.fieldDiff,
          recordVersion: input.preview.recordVersion,
          attachmentIds,
          normalizedInput,
          sessionId,
          createdByUserId: auth.userId,
          idempotencyKey,
          ttlSeconds: this.config.aiPendingActionTtlSeconds,
        });
        if (saved) return { ...saved, expired: expiredRows };
      }
      throw new Error('could not store the pending action');
    });
    await this.events.emit('expired', expired);
    if (inserted) await this.events.emit('created', [row]);
    return serializePendingAction(row);
  }

  async get(auth: AuthContext, id: string): Promise<SerializedPendingAction> {
    return serializePendingAction(await this.findOrThrow(auth, id));
  }

  /**
   * pending -> cancelled (event `ai.action.cancelled`, the tool never runs). A repeated cancel answers
   * the cancelled action again without a second event; a pending action past expiry becomes `expired`
   * (409 `expired`); any other status is 409 `invalid_status`.
   */
  async cancel(auth: AuthContext, id: string, reason: string | null): Promise<SerializedPendingAction> {
    const scope = scopeOf(auth);
    let row = await this.findOrThrow(auth, id);
    // Two rounds at most: a concurrent confirm, cancel or expiry may move the row under us once.
    for (let round = 0; round < 2; round += 1) {
      if (row.status === 'cancelled') return serializePendingAction(row);
      if (row.status === 'expired') throw expiredError();
      if (row.status !== 'pending') throw invalidStatusError(row.status);
      const cancelled = await this.repository.cancel(this.dataSource, scope, { id: row.id, reason });
      if (cancelled) {
        await this.events.emit('cancelled', [cancelled]);
        return serializePendingAction(cancelled);
      }
      await this.expireIfDue(auth, row.id);
      row = await this.findOrThrow(auth, id);
    }
    throw invalidStatusError(row.status);
  }

  /** Marks the action expired when it is pending past its expiry: 409 `expired` then. */
  async expireIfDue(auth: AuthContext, id: string): Promise<void> {
    const expired = await this.repository.expireOne(this.dataSource, scopeOf(auth), id);
    if (!expired) return;
    await this.events.emit('expired', [expired]);
    throw expiredError();
  }

  /** The action if the caller may act on it: its creator, or a super administrator, in the caller's tenant. */
  async findOrThrow(auth: AuthContext, id: string): Promise<PendingActionRow> {
    const row = UUID.test(id) ? await this.repository.find(this.dataSource, scopeOf(auth), { id, anyCreator: auth.isSuperAdmin }) : null;
    if (!row) throw DomainError.notFound('pending action not found');
    return row;
  }

  private normalize(tool: MutationTool, input: unknown): unknown {
    const parsed = tool.inputSchema.safeParse(input);
    if (!parsed.success) {
      const details = parsed.error.issues.map((issue) => ({ field: issue.path.join('.'), message: issue.message, code: issue.code }));
      throw DomainError.badRequest(`invalid input for ${tool.name}`, details);
    }
    return parsed.data;
  }
}
