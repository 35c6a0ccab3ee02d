import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { FieldError } from '@app/contracts';
import type { CommandDefinition, Snapshot } from '../../../core/audit/command.js';
import { CommandBus } from '../../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../../core/auth/auth-context.js';
import { scopeOf, type TenantScope } from '../../../core/scope/tenant-scope.js';
import { AI_ASSISTANT_SETTINGS_MANAGE } from '../ai-assistant.declarations.js';
import { tenantOverrideCommand } from './tenant-override-command.js';
import type { AgentDefinition } from '../agents/agent-definition.js';
import {
  EMPTY_LOOP_OVERRIDE,
  LOOP_FIELDS,
  type LoopOverrideValues,
  type StopCondition,
  stopConditionSchema,
} from '../agents/agent-loop-limits.js';
import { AgentLoopOverrideRepository, type LoopOverride } from './agent-loop-override.repository.js';
import type { LoopOverrideDto } from './agent-loop-override.dto.js';
import { AgentRegistry } from '../agents/agent-registry.js';

export interface LoopOverrideView {
  agentId: string;
  /** null: no override, or every axis cleared. */
  override: LoopOverride | null;
}

/**
 * Per-tenant loop overrides of an agent (/ai_assistant/ai/agents/{agentId}/loop-override). Saves and
 * clears are commands (action log entries, undoable); chat reads `values` on every turn.
 */
@Injectable()
export class AgentLoopOverrideService {
  private readonly commandBase = tenantOverrideCommand<{ agentId: string }>({
    resourceKind: 'ai_assistant.loop_override',
    features: [AI_ASSISTANT_SETTINGS_MANAGE],
    targetId: (input) => input.agentId,
    read: async (tx, tenant, agentId, forUpdate) => {
      const row = await this.repository.find(tx, tenant, { agentId, forUpdate });
      return row ? (pickValues(row) as unknown as Snapshot) : null;
    },
    write: async (tx, tenant, agentId, snapshot) => {
      if (snapshot === null) await this.repository.delete(tx, tenant, agentId);
      else await this.repository.upsert(tx, tenant, { agentId, values: pickValues(snapshot as unknown as LoopOverrideValues) });
    },
  });

  private readonly saveCommand: CommandDefinition<{ agentId: string; changes: Partial<LoopOverrideValues> }, LoopOverrideView> = {
    ...this.commandBase,
    id: 'ai_assistant.loop_override.save',
    label: 'Save AI agent loop override',
    actionType: 'edit',
    execute: async (tx, auth, input, before) => {
      const current = (before as LoopOverrideValues | null) ?? EMPTY_LOOP_OVERRIDE;
      const values = { ...pickValues(current), ...input.changes };
      const saved = await this.repository.upsert(tx, scopeOf(auth), { agentId: input.agentId, values });
      return { resourceId: input.agentId, result: { agentId: input.agentId, override: visible(saved) } };
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly registry: AgentRegistry,
    private readonly repository: AgentLoopOverrideRepository,
    private readonly bus: CommandBus,
  ) {
    bus.register(this.saveCommand);
  }

  async get(auth: AuthContext, agentId: string): Promise<LoopOverrideView> {
    const agent = this.registry.getOrThrow(agentId, { checkFormat: true });
    return { agentId: agent.id, override: visible(await this.repository.find(this.dataSource, scopeOf(auth), { agentId: agent.id })) };
  }

  /** The override chat applies (null: none). */
  async values(scope: TenantScope, agentId: string): Promise<LoopOverrideValues | null> {
    return this.repository.find(this.dataSource, scope, { agentId });
  }

  save(auth: AuthContext, agentId: string, body: LoopOverrideDto): Promise<LoopOverrideView> {
    const agent = this.registry.getOrThrow(agentId, { checkFormat: true });
    const changes: Partial<LoopOverrideValues> = {};
    for (const field of LOOP_FIELDS) {
      if (body[field] !== undefined) Object.assign(changes, { [field]: body[field] });
    }
    if (body.loopStopWhenJson) changes.loopStopWhenJson = validStopConditions(agent, body.loopStopWhenJson);
    if (body.loopActiveToolsJson) changes.loopActiveToolsJson = validActiveTools(agent, body.loopActiveToolsJson);
    return this.bus.execute(auth, this.saveCommand, { agentId: agent.id, changes });
  }

  /** Nulls all seven axes; idempotent (no row, or nothing set: no action log entry). */
  async clear(auth: AuthContext, agentId: string): Promise<LoopOverrideView> {
    const agent = this.registry.getOrThrow(agentId, { checkFormat: true });
    const existing = await this.repository.find(this.dataSource, scopeOf(auth), { agentId: agent.id });
    if (!visible(existing)) return { agentId: agent.id, override: null };
    return this.bus.execute(auth, this.saveCommand, { agentId: agent.id, changes: EMPTY_LOOP_OVERRIDE });
  }
}

function pickValues(source: LoopOverrideValues): LoopOverrideValues {
  return Object.fromEntries(LOOP_FIELDS.map((field) => [field, source[field] ?? null])) as unknown as LoopOverrideValues;
}

/** A row whose seven axes are all null is no override. */
function visible(row: LoopOverride | null): LoopOverride | null {
  return row && LOOP_FIELDS.some((field) => row[field] !== null) ? row : null;
}

function validStopConditions(agent: AgentDefinition, items: unknown[]): StopCondition[] {
  const schema = stopConditionSchema(agent);
  const details: FieldError[] = [];
  const conditions = items.flatMap((item, index) => {
    const parsed = schema.safeParse(item);
    if (parsed.success) return [parsed.data];
    for (const issue of parsed.error.issues) {
      const path = issue.path.map((p) => `.${String(p)}`).join('');
      details.push({ field: `loopStopWhenJson[${index}]${path}`, message: issue.message, code: issue.code });
    }
    return [];
  });
  if (details.length > 0) throw DomainError.badRequest('invalid loopStopWhenJson', details);
  return conditions;
}

function validActiveTools(agent: AgentDefinition, names: string[]): string[] {
  const known = new Set(agent.tools.map((t) => t.name));
  const details: FieldError[] = names.flatMap((name, index) =>
    known.has(name) ? [] : [{ field: `loopActiveToolsJson[${index}]`, message: `${agent.id} has no tool ${name}`, code: 'unknown_tool' }],
  );
  if (details.length > 0) throw DomainError.badRequest('invalid loopActiveToolsJson', details);
  return [...new Set(names)];
}
