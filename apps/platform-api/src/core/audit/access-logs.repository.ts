import { Injectable } from '@nestjs/common';
import { execute, type Db } from '@app/service-kit';

/** One buffered read, as the access log stores it (snake_case: the batch travels as a JSON array). */
export interface AccessLogEntryRow {
  tenant_id: string;
  organization_id: string | null;
  actor_user_id: string;
  resource_kind: string;
  resource_id: string | null;
  access_type: string;
  fields: string[];
  context: Record<string, unknown> | null;
  created_at: string;
}

/**
 * The one writer of `access_logs`. A batch mixes the reads of every tenant served since the last
 * flush, so it takes no scope: each row carries its own tenant. Reads of the log for the API are in
 * modules/audit-logs.
 */
@Injectable()
export class AccessLogsRepository {
  /**
   * One multi-row INSERT with one parameter (a JSON array). Entries of a tenant deleted in between
   * are skipped rather than failing the whole batch.
   */
  async insertBatch(db: Db, entries: AccessLogEntryRow[]): Promise<void> {
    await execute(
      db,
      `INSERT INTO access_logs (tenant_id, organization_id, actor_user_id, resource_kind, resource_id, access_type, fields, context, created_at)
       SELECT e.tenant_id, e.organization_id, e.actor_user_id, e.resource_kind, e.resource_id, e.access_type,
              COALESCE(e.fields, '{}'), e.context, e.created_at
         FROM jsonb_to_recordset($1::jsonb) AS e(tenant_id uuid, organization_id uuid, actor_user_id uuid, resource_kind text,
              resource_id text, access_type text, fields text[], context jsonb, created_at timestamptz)
        WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = e.tenant_id)`,
      [JSON.stringify(entries)],
    );
  }
}
