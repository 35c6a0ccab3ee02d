import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../../core/scope/tenant-scope.js';

/** A tenant's provider allowlist (null models: every model of the allowed providers). */
export interface RuntimeAllowlist {
  allowedProviders: string[];
  allowedModels: string[] | null;
  updatedAt: string;
}

interface AllowlistDbRow {
  allowed_providers: string[];
  allowed_models: string[] | null;
  updated_at: string;
}

const COLUMNS = `allowed_providers, allowed_models, to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at`;

const toAllowlist = (r: AllowlistDbRow): RuntimeAllowlist => ({
  allowedProviders: r.allowed_providers,
  allowedModels: r.allowed_models,
  updatedAt: r.updated_at,
});

/** The one writer of `ai_runtime_allowlists`: at most one row per tenant. */
@Injectable()
export class RuntimeAllowlistRepository {
  async find(db: Db, scope: TenantScope, input: { forUpdate?: boolean } = {}): Promise<RuntimeAllowlist | null> {
    const row = await queryOne<AllowlistDbRow>(
      db,
      `SELECT ${COLUMNS} FROM ai_runtime_allowlists WHERE tenant_id = $1${input.forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.tenantId],
    );
    return row ? toAllowlist(row) : null;
  }

  async upsert(
    db: Db,
    scope: TenantScope,
    input: { allowedProviders: string[]; allowedModels: string[] | null },
  ): Promise<RuntimeAllowlist> {
    const row = await queryOne<AllowlistDbRow>(
      db,
      `INSERT INTO ai_runtime_allowlists (tenant_id, allowed_providers, allowed_models, updated_by_user_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant_id) DO UPDATE
         SET allowed_providers = EXCLUDED.allowed_providers, allowed_models = EXCLUDED.allowed_models,
             updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()
       RETURNING ${COLUMNS}`,
      [scope.tenantId, input.allowedProviders, input.allowedModels, scope.userId],
    );
    if (!row) throw new Error('allowlist upsert returned no row');
    return toAllowlist(row);
  }

  async delete(db: Db, scope: TenantScope): Promise<boolean> {
    return (await execute(db, 'DELETE FROM ai_runtime_allowlists WHERE tenant_id = $1', [scope.tenantId])) > 0;
  }
}
