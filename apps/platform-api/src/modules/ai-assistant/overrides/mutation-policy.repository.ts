import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne, isoTimestamp } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import type { MutationPolicy } from '../agents/agent-definition.js';

/** A tenant's mutation-policy override of one agent, as the API answers it. */
export interface MutationPolicyOverride {
  agentId: string;
  mutationPolicy: MutationPolicy;
  notes: string | null;
  updatedByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

interface OverrideDbRow {
  agent_id: string;
  mutation_policy: MutationPolicy;
  notes: string | null;
  updated_by_user_id: string | null;
  created_at: string;
  updated_at: string;
}

const COLUMNS = `agent_id, mutation_policy, notes, updated_by_user_id, ${isoTimestamp('created_at')} AS created_at, ${isoTimestamp('updated_at')} AS updated_at`;

function toOverride(r: OverrideDbRow): MutationPolicyOverride {
  return {
    agentId: r.agent_id,
    mutationPolicy: r.mutation_policy,
    notes: r.notes,
    updatedByUserId: r.updated_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The one writer of `ai_mutation_policy_overrides`: at most one row per (tenant, agent). */
@Injectable()
export class MutationPolicyRepository {
  async find(db: Db, scope: TenantScope, input: { agentId: string; forUpdate?: boolean }): Promise<MutationPolicyOverride | null> {
    const row = await queryOne<OverrideDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_mutation_policy_overrides WHERE tenant_id = $1 AND agent_id = $2${input.forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.tenantId, input.agentId],
    );
    return row ? toOverride(row) : null;
  }

  async upsert(
    db: Db,
    scope: TenantScope,
    input: { agentId: string; mutationPolicy: MutationPolicy; notes: string | null; createdAt?: string },
  ): Promise<MutationPolicyOverride> {
    const row = await queryOne<OverrideDbRow>(
      db,
      `INSERT INTO ai_mutation_policy_overrides (tenant_id, agent_id, mutation_policy, notes, updated_by_user_id, created_at)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::timestamptz, now()))
       ON CONFLICT (tenant_id, agent_id) DO UPDATE
         SET mutation_policy = EXCLUDED.mutation_policy, notes = EXCLUDED.notes,
             updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()
       RETURNING ${COLUMNS}`,
      [scope.tenantId, input.agentId, input.mutationPolicy, input.notes, scope.userId, input.createdAt ?? null],
    );
    if (!row) throw new Error('mutation policy upsert returned no row');
    return toOverride(row);
  }

  /** true when a row was there. */
  async delete(db: Db, scope: TenantScope, agentId: string): Promise<boolean> {
    return (
      (await execute(db, 'DELETE FROM ai_mutation_policy_overrides WHERE tenant_id = $1 AND agent_id = $2', [scope.tenantId, agentId])) > 0
    );
  }
}
