import { Injectable } from '@nestjs/common';
import { execute, queryOne, type Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import type { NotificationSettings } from './notification-settings.js';

interface SettingsRow {
  /** As stored: possibly partial or of an older shape (merged over the defaults by the service). */
  settings: Partial<NotificationSettings>;
}

/** The one writer of `notification_settings`: one row per tenant, absent until the first save. */
@Injectable()
export class NotificationSettingsRepository {
  /** The tenant's stored settings; null: never saved. `forUpdate` locks the row until the transaction ends. */
  async find(db: Db, scope: TenantScope, options: { forUpdate?: boolean } = {}): Promise<Partial<NotificationSettings> | null> {
    const row = await queryOne<SettingsRow>(
      db,
      `SELECT settings FROM notification_settings WHERE tenant_id = $1${options.forUpdate ? ' FOR UPDATE' : ''}`,
      [scope.tenantId],
    );
    return row?.settings ?? null;
  }

  /** `updatedByUserId`: the user who saved them (null for an undo or redo's restore). */
  async upsert(db: Db, scope: TenantScope, input: { settings: NotificationSettings; updatedByUserId: string | null }): Promise<void> {
    await execute(
      db,
      `INSERT INTO notification_settings (tenant_id, settings, updated_by_user_id, updated_at) VALUES ($1, $2::jsonb, $3, now())
       ON CONFLICT (tenant_id) DO UPDATE SET settings = EXCLUDED.settings, updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()`,
      [scope.tenantId, JSON.stringify(input.settings), input.updatedByUserId],
    );
  }

  async delete(db: Db, scope: TenantScope): Promise<void> {
    await execute(db, 'DELETE FROM notification_settings WHERE tenant_id = $1', [scope.tenantId]);
  }
}
