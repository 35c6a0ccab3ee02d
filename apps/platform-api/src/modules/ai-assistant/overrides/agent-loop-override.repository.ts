import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import type { LoopOverrideValues, StopCondition } from '../agents/agent-loop-limits.js';

export interface LoopOverride extends LoopOverrideValues {
  updatedAt: string;
}

interface LoopOverrideDbRow {
  loop_disabled: boolean | null;
  loop_max_steps: number | null;
  loop_max_tool_calls: number | null;
  loop_max_wall_clock_ms: number | null;
  loop_max_tokens: number | null;
  loop_stop_when_json: StopCondition[] | null;
  loop_active_tools_json: string[] | null;
  updated_at: string;
}

const COLUMNS = `loop_disabled, loop_max_steps, loop_max_tool_calls, loop_max_wall_clock_ms, loop_max_tokens,
  loop_stop_when_json, loop_active_tools_json, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

const toOverride = (r: LoopOverrideDbRow): LoopOverride => ({
  loopDisabled: r.loop_disabled,
  loopMaxSteps: r.loop_max_steps,
  loopMaxToolCalls: r.loop_max_tool_calls,
  loopMaxWallClockMs: r.loop_max_wall_clock_ms,
  loopMaxTokens: r.loop_max_tokens,
  loopStopWhenJson: r.loop_stop_when_json,
  loopActiveToolsJson: r.loop_active_tools_json,
  updatedAt: r.updated_at,
});

const json = (value: unknown) => (value === null ? null : JSON.stringify(value));

/** The one writer of `ai_agent_loop_overrides`: one row per (tenant, agent). */
@Injectable()
export class AgentLoopOverrideRepository {
  async find(db: Db, scope: TenantScope, input: { agentId: string; forUpdate?: boolean }): Promise<LoopOverride | null> {
    const row = await queryOne<LoopOverrideDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_agent_loop_overrides WHERE tenant_id = $1 AND agent_id = $2${input.forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.tenantId, input.agentId],
    );
    return row ? toOverride(row) : null;
  }

  async upsert(db: Db, scope: TenantScope, input: { agentId: string; values: LoopOverrideValues }): Promise<LoopOverride> {
    const v = input.values;
    const row = await queryOne<LoopOverrideDbRow>(
      db,
      `INSERT INTO ai_agent_loop_overrides (tenant_id, agent_id, loop_disabled, loop_max_steps, loop_max_tool_calls,
              loop_max_wall_clock_ms, loop_max_tokens, loop_stop_when_json, loop_active_tools_json, updated_by_user_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10)
       ON CONFLICT (tenant_id, agent_id) DO UPDATE
         SET loop_disabled = EXCLUDED.loop_disabled, loop_max_steps = EXCLUDED.loop_max_steps,
             loop_max_tool_calls = EXCLUDED.loop_max_tool_calls, loop_max_wall_clock_ms = EXCLUDED.loop_max_wall_clock_ms,
             loop_max_tokens = EXCLUDED.loop_max_tokens, loop_stop_when_json = EXCLUDED.loop_stop_when_json,
             loop_active_tools_json = EXCLUDED.loop_active_tools_json, updated_by_user_id = EXCLUDED.updated_by_user_id,
             updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        scope.tenantId,
        input.agentId,
        v.loopDisabled,
        v.loopMaxSteps,
        v.loopMaxToolCalls,
        v.loopMaxWallClockMs,
        v.loopMaxTokens,
        json(v.loopStopWhenJson),
        json(v.loopActiveToolsJson),
        scope.userId,
      ],
    );
    if (!row) throw new Error('loop override upsert returned no row');
    return toOverride(row);
  }

  /** Undo of a first save: the row goes. */
  async delete(db: Db, scope: TenantScope, agentId: string): Promise<void> {
    await execute(db, 'DELETE FROM ai_agent_loop_overrides WHERE tenant_id = $1 AND agent_id = $2', [scope.tenantId, agentId]);
  }
}
