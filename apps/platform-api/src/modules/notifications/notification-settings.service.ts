import { Injectable, Optional } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import type { CommandDefinition, Snapshot } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { mergeNotificationSettings, type NotificationSettings } from './notification-settings.js';
import type { SaveNotificationSettingsDto } from './notifications.dto.js';

type SettingsSaved = { ok: true; settings: NotificationSettings };

/** The stored row of a tenant (null: never saved, the defaults apply), as the action log records it. */
async function snapshotSettings(tx: EntityManager, tenantId: string): Promise<Snapshot | null> {
  const rows = await tx.query('SELECT settings FROM notification_settings WHERE tenant_id = $1', [tenantId]);
  return rows[0] ? { settings: rows[0].settings } : null;
}

async function writeSettings(tx: EntityManager, tenantId: string, settings: NotificationSettings, userId: string | null): Promise<void> {
  await tx.query(
    `INSERT INTO notification_settings (tenant_id, settings, updated_by_user_id, updated_at) VALUES ($1, $2::jsonb, $3, now())
     ON CONFLICT (tenant_id) DO UPDATE SET settings = EXCLUDED.settings, updated_by_user_id = EXCLUDED.updated_by_user_id, updated_at = now()`,
    [tenantId, JSON.stringify(settings), userId],
  );
}

/**
 * Per-tenant delivery settings (GET/POST /notifications/settings). A save is a command (action log
 * entry, undoable). The worker, which only reads settings, has no command bus.
 */
@Injectable()
export class NotificationSettingsService {
  private readonly saveCommand: CommandDefinition<{ tenantId: string; patch: SaveNotificationSettingsDto }, SettingsSaved> = {
    id: 'notifications.settings.update',
    features: ['notifications.manage'],
    label: 'Save notification settings',
    actionType: 'edit',
    resourceKind: 'notifications.settings',
    targetId: (input) => input.tenantId,
    snapshot: snapshotSettings,
    execute: async (tx, auth, input) => {
      const rows = await tx.query('SELECT settings FROM notification_settings WHERE tenant_id = $1 FOR UPDATE', [input.tenantId]);
      const settings = mergeNotificationSettings(rows[0]?.settings ?? null, input.patch);
      await writeSettings(tx, input.tenantId, settings, auth.userId);
      return { resourceId: input.tenantId, result: { ok: true, settings } };
    },
    restore: async (tx, tenantId, snapshot) => {
      if (snapshot === null) await tx.query('DELETE FROM notification_settings WHERE tenant_id = $1', [tenantId]);
      else await writeSettings(tx, tenantId, snapshot.settings as NotificationSettings, null);
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    @Optional() private readonly bus?: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus?.register(this.saveCommand);
  }

  async get(auth: AuthContext): Promise<{ settings: NotificationSettings }> {
    return { settings: await this.forTenant(auth.tenantId) };
  }

  /** Strategies (and fields) left out keep their stored value. */
  async save(auth: AuthContext, dto: SaveNotificationSettingsDto): Promise<SettingsSaved> {
    if (!this.bus) throw new Error('notification settings are saved through the API, which runs the command bus');
    return this.bus.execute(auth, this.saveCommand, { tenantId: auth.tenantId, patch: dto });
  }

  async forTenant(tenantId: string): Promise<NotificationSettings> {
    const rows = await this.dataSource.query('SELECT settings FROM notification_settings WHERE tenant_id = $1', [tenantId]);
    return mergeNotificationSettings(rows[0]?.settings ?? null);
  }
}
