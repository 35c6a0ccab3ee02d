import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { CommandDefinition } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { scopeOf, systemScope, type TenantScope } from '../../core/scope/tenant-scope.js';
import { NotificationSettingsRepository } from './notification-settings.repository.js';
import { mergeNotificationSettings, type NotificationSettings } from './notification-settings.js';
import type { SaveNotificationSettingsDto } from './notifications.dto.js';

type SettingsSaved = { ok: true; settings: NotificationSettings };

/**
 * Per-tenant delivery settings (GET/POST /notifications/settings). A save is a command (action log
 * entry, undoable); the command's resource is the tenant (its id), whose row the snapshot and the
 * restore address. The worker, which only reads settings, has no command bus.
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
    // The stored row (null: never saved, the defaults apply), as the action log records it.
    snapshot: async (tx, tenantId) => {
      const stored = await this.repository.find(tx, systemScope(tenantId));
      return stored ? { settings: stored } : null;
    },
    execute: async (tx, auth, input) => {
      const scope = scopeOf(auth);
      const settings = mergeNotificationSettings(await this.repository.find(tx, scope, { forUpdate: true }), input.patch);
      await this.repository.upsert(tx, scope, { settings, updatedByUserId: auth.userId });
      return { resourceId: input.tenantId, result: { ok: true, settings } };
    },
    restore: async (tx, tenantId, snapshot) => {
      const scope = systemScope(tenantId);
      if (snapshot === null) await this.repository.delete(tx, scope);
      else await this.repository.upsert(tx, scope, { settings: snapshot.settings as NotificationSettings, updatedByUserId: null });
    },
  };

  constructor(
    private readonly dataSource: DataSource,
    private readonly repository: NotificationSettingsRepository,
    @Optional() private readonly bus?: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus?.register(this.saveCommand);
  }

  async get(auth: AuthContext): Promise<{ settings: NotificationSettings }> {
    return { settings: await this.forScope(scopeOf(auth)) };
  }

  /** Strategies (and fields) left out keep their stored value. */
  async save(auth: AuthContext, dto: SaveNotificationSettingsDto): Promise<SettingsSaved> {
    if (!this.bus) throw new Error('notification settings are saved through the API, which runs the command bus');
    return this.bus.execute(auth, this.saveCommand, { tenantId: auth.tenantId, patch: dto });
  }

  /** The settings in effect for the scope's tenant: the stored ones over the defaults. */
  async forScope(scope: TenantScope): Promise<NotificationSettings> {
    return mergeNotificationSettings(await this.repository.find(this.dataSource, scope));
  }
}
