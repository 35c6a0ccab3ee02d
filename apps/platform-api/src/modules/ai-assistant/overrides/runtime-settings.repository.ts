import { Injectable } from '@nestjs/common';
import { type Db, execute, query, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';
import type { RuntimeAllowlist } from './runtime-allowlist.repository.js';

/** A tenant's runtime settings row: tenant-wide (`agentId` null) or for one agent. */
export interface RuntimeSettings {
  agentId: string | null;
  providerId: string | null;
  modelId: string | null;
  baseURL: string | null;
  allowedOverrideProviders: string[] | null;
  /** A key of the tenant's own is stored with this row's base URL (the key itself is never read back out). */
  hasApiKey: boolean;
  updatedAt: string;
}

/** A row as a run reads it: with the sealed key (ProviderKeyCipher opens it for its base URL). */
export type RuntimeSettingsForRun = RuntimeSettings & { apiKeySealed: string | null };

/** What a write does to the stored key: store this sealed one, keep the stored one (while the base URL stays the same), or none. */
export type StoredKeyChange = { sealed: string } | 'keep' | 'clear';

export type RuntimeSettingsInput = Omit<RuntimeSettings, 'updatedAt' | 'hasApiKey'> & { apiKey: StoredKeyChange };

interface SettingsDbRow {
  agent_id: string | null;
  provider_id: string | null;
  model_id: string | null;
  base_url: string | null;
  allowed_override_providers: string[] | null;
  has_api_key: boolean;
  updated_at: string;
}

const COLUMNS = `agent_id, provider_id, model_id, base_url, allowed_override_providers, api_key_sealed IS NOT NULL AS has_api_key,
  to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

function toSettings(r: SettingsDbRow): RuntimeSettings {
  return {
    agentId: r.agent_id,
    providerId: r.provider_id,
    modelId: r.model_id,
    baseURL: r.base_url,
    allowedOverrideProviders: r.allowed_override_providers,
    hasApiKey: r.has_api_key,
    updatedAt: r.updated_at,
  };
}

/** The one writer of `ai_runtime_settings`: one tenant-wide row and one row per agent, per tenant. */
@Injectable()
export class RuntimeSettingsRepository {
  /** The tenant's rows, the tenant-wide one first. */
  async list(db: Db, scope: TenantScope): Promise<RuntimeSettings[]> {
    const rows = await query<SettingsDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_runtime_settings WHERE tenant_id = $1 ORDER BY agent_id NULLS FIRST`,
      [scope.tenantId],
    );
    return rows.map(toSettings);
  }

  /**
   * What a run of an agent resolves its provider from, in one round trip on the chat path: the agent's
   * row, the tenant-wide row, and the tenant's allowlist (read here; written by RuntimeAllowlistRepository).
   */
  async forRun(
    db: Db,
    scope: TenantScope,
    agentId: string,
  ): Promise<{
    agent: RuntimeSettingsForRun | null;
    tenant: RuntimeSettingsForRun | null;
    allowlist: Omit<RuntimeAllowlist, 'updatedAt'> | null;
  }> {
    const [row] = await query<{
      settings: (SettingsDbRow & { api_key_sealed: string | null })[];
      allowlist: { allowed_providers: string[]; allowed_models: string[] | null } | null;
    }>(
      db,
      `SELECT COALESCE((SELECT json_agg(s) FROM (SELECT ${COLUMNS}, api_key_sealed FROM ai_runtime_settings
                                                   WHERE tenant_id = $1 AND (agent_id IS NULL OR agent_id = $2)) s), '[]'::json) AS settings,
              (SELECT json_build_object('allowed_providers', a.allowed_providers, 'allowed_models', a.allowed_models)
                 FROM ai_runtime_allowlists a WHERE a.tenant_id = $1) AS allowlist`,
      [scope.tenantId, agentId],
    );
    const settings = (row?.settings ?? []).map((r) => ({ ...toSettings(r), apiKeySealed: r.api_key_sealed }));
    const allowlist = row?.allowlist
      ? { allowedProviders: row.allowlist.allowed_providers, allowedModels: row.allowlist.allowed_models }
      : null;
    return { agent: settings.find((s) => s.agentId !== null) ?? null, tenant: settings.find((s) => s.agentId === null) ?? null, allowlist };
  }

  async find(db: Db, scope: TenantScope, input: { agentId: string | null; forUpdate?: boolean }): Promise<RuntimeSettings | null> {
    const row = await queryOne<SettingsDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_runtime_settings
        WHERE tenant_id = $1 AND agent_id IS NOT DISTINCT FROM $2${input.forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.tenantId, input.agentId],
    );
    return row ? toSettings(row) : null;
  }

  /** A kept key survives only while the base URL stays the same: it was stored for that URL alone. */
  async upsert(db: Db, scope: TenantScope, input: RuntimeSettingsInput): Promise<RuntimeSettings> {
    const keep = input.apiKey === 'keep';
    const row = await queryOne<SettingsDbRow>(
      db,
      `INSERT INTO ai_runtime_settings (tenant_id, agent_id, provider_id, model_id, base_url, allowed_override_providers, updated_by_user_id,
              api_key_sealed)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT ON CONSTRAINT ai_runtime_settings_tenant_agent_uq DO UPDATE
         SET provider_id = EXCLUDED.provider_id, model_id = EXCLUDED.model_id, base_url = EXCLUDED.base_url,
             allowed_override_providers = EXCLUDED.allowed_override_providers,
             api_key_sealed = CASE WHEN NOT $9::boolean THEN EXCLUDED.api_key_sealed
                                   WHEN ai_runtime_settings.base_url IS NOT DISTINCT FROM EXCLUDED.base_url
                                   THEN ai_runtime_settings.api_key_sealed END,
             updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        scope.tenantId,
        input.agentId,
        input.providerId,
        input.modelId,
        input.baseURL,
        input.allowedOverrideProviders,
        scope.userId,
        typeof input.apiKey === 'object' ? input.apiKey.sealed : null,
        keep,
      ],
    );
    if (!row) throw new Error('runtime settings upsert returned no row');
    return toSettings(row);
  }

  /** Whether a row was there. */
  async delete(db: Db, scope: TenantScope, agentId: string | null): Promise<boolean> {
    const n = await execute(db, 'DELETE FROM ai_runtime_settings WHERE tenant_id = $1 AND agent_id IS NOT DISTINCT FROM $2', [
      scope.tenantId,
      agentId,
    ]);
    return n > 0;
  }
}
