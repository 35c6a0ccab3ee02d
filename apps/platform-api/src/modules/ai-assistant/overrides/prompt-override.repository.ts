import { Injectable } from '@nestjs/common';
import { type Db, query, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

/** One saved version of an agent's prompt override. Versions are immutable: `updatedAt` is when it was saved. */
export interface PromptOverrideVersion {
  id: string;
  agentId: string;
  organizationId: string | null;
  version: number;
  sections: Record<string, string>;
  notes: string | null;
  createdByUserId: string | null;
  createdAt: string;
  updatedAt: string;
}

interface VersionDbRow {
  id: string;
  agent_id: string;
  organization_id: string | null;
  version: number;
  sections: Record<string, string>;
  notes: string | null;
  created_by_user_id: string | null;
  created_at: string;
}

const COLUMNS = `id, agent_id, organization_id, version, sections, notes, created_by_user_id,
  to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

function toVersion(r: VersionDbRow): PromptOverrideVersion {
  return {
    id: r.id,
    agentId: r.agent_id,
    organizationId: r.organization_id,
    version: r.version,
    sections: r.sections,
    notes: r.notes,
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    updatedAt: r.created_at,
  };
}

/**
 * The one writer of `ai_prompt_overrides` and its version counters (`ai_prompt_override_counters`).
 * Reads take the organization of the caller (null: the tenant-wide override).
 */
@Injectable()
export class PromptOverrideRepository {
  /**
   * Saves a new version in one statement: the counter row of (tenant, organization, agent) is created
   * or incremented (its row lock orders concurrent saves), and the version row takes that number. Two
   * concurrent saves get two consecutive versions; a number is never handed out twice.
   */
  async insertNextVersion(
    db: Db,
    scope: TenantScope,
    input: { organizationId: string | null; agentId: string; sections: Record<string, string>; notes: string | null },
  ): Promise<PromptOverrideVersion> {
    const row = await queryOne<VersionDbRow>(
      db,
      `WITH next AS (
         INSERT INTO ai_prompt_override_counters AS c (tenant_id, organization_id, agent_id, last_version)
         VALUES ($1, $2, $3, 1)
         ON CONFLICT (tenant_id, organization_id, agent_id) DO UPDATE SET last_version = c.last_version + 1
         RETURNING last_version
       )
       INSERT INTO ai_prompt_overrides (tenant_id, organization_id, agent_id, version, sections, notes, created_by_user_id)
       SELECT $1, $2, $3, next.last_version, $4::jsonb, $5, $6 FROM next
       RETURNING ${COLUMNS}`,
      [scope.tenantId, input.organizationId, input.agentId, JSON.stringify(input.sections), input.notes, scope.userId],
    );
    if (!row) throw new Error('prompt override insert returned no row');
    return toVersion(row);
  }

  /** The newest `limit` versions of (tenant, organization, agent), newest first. */
  async listVersions(
    db: Db,
    scope: TenantScope,
    input: { organizationId: string | null; agentId: string; limit: number },
  ): Promise<PromptOverrideVersion[]> {
    const rows = await query<VersionDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_prompt_overrides
        WHERE tenant_id = $1 AND organization_id IS NOT DISTINCT FROM $2 AND agent_id = $3
        ORDER BY version DESC LIMIT $4`,
      [scope.tenantId, input.organizationId, input.agentId, input.limit],
    );
    return rows.map(toVersion);
  }

  /** The override in effect: the organization's newest version, else the tenant-wide one's (organization null). */
  async findEffective(
    db: Db,
    scope: TenantScope,
    input: { organizationId: string | null; agentId: string },
  ): Promise<PromptOverrideVersion | null> {
    const row = await queryOne<VersionDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_prompt_overrides
        WHERE tenant_id = $1 AND agent_id = $3 AND (organization_id = $2 OR organization_id IS NULL)
        ORDER BY organization_id IS NULL, version DESC LIMIT 1`,
      [scope.tenantId, input.organizationId, input.agentId],
    );
    return row ? toVersion(row) : null;
  }

  /** One version by id in the scope's tenant (the action log's snapshot of a save). */
  async findById(db: Db, scope: TenantScope, id: string): Promise<PromptOverrideVersion | null> {
    const row = await queryOne<VersionDbRow>(db, `SELECT ${COLUMNS} FROM ai_prompt_overrides WHERE id = $1 AND tenant_id = $2`, [
      id,
      scope.tenantId,
    ]);
    return row ? toVersion(row) : null;
  }
}
