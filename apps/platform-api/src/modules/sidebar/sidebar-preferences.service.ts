import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { DomainError, type Db } from '@app/service-kit';
import type { CommandDefinition, Snapshot } from '../../core/audit/command.js';
import { CommandBus } from '../../core/audit/command-bus.service.js';
import type { AuthContext } from '../../core/auth/auth-context.js';
import { scopeOf, type TenantScope } from '../../core/scope/tenant-scope.js';
import { callerLocale } from './sidebar-locale.js';
import { preferenceResourceId, restorePreferences, snapshotPreferences } from './sidebar-snapshot.js';
import { normalizeSidebarSettings, emptySidebarSettings, type SidebarSettings } from './sidebar-settings.js';
import { SIDEBAR_MANAGE_FEATURE, type UpdateSidebarPreferencesDto } from './sidebar.dto.js';
import { SidebarRepository, type SidebarRoleEntry } from './sidebar.repository.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type SidebarScope = { type: 'user' } | { type: 'role'; roleId: string };

export interface SidebarPreferencesResponse {
  locale: string;
  settings: SidebarSettings;
  canApplyToRoles: boolean;
  roles: SidebarRoleEntry[];
  scope: SidebarScope;
}

export interface SidebarPreferencesUpdateResponse extends SidebarPreferencesResponse {
  appliedRoles: string[];
  clearedRoles: string[];
}

/** A save with the caller's locale resolved and the resource it writes named (see sidebar-snapshot.ts). */
interface PreferencesUpdateInput {
  resourceId: string;
  locale: string;
  settings: SidebarSettings;
  scope: SidebarScope;
  applyToRoles: string[];
  clearRoleIds: string[];
}

interface RolePreferenceDeleteInput {
  resourceId: string;
  locale: string;
  roleId: string;
}

/**
 * Sidebar preferences per user + tenant + locale, or per role + tenant + locale. Roles in reach are
 * the tenant's own and the global ones; any other role id is a 404.
 */
@Injectable()
export class SidebarPreferencesService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly repo: SidebarRepository,
    private readonly bus: CommandBus,
  ) {
    // Registered at start so an undo after a restart finds the inverse.
    bus.register(this.updateCommand, this.deleteCommand);
  }

  /** What both commands share: rows addressed by (tenant, user or role, locale), restored exactly. */
  private readonly preferenceCommandBase = {
    resourceKind: 'auth.sidebar_preference',
    snapshot: (tx: EntityManager, resourceId: string) => snapshotPreferences(this.repo, tx, resourceId),
    restore: (tx: EntityManager, resourceId: string, snapshot: Snapshot | null) => restorePreferences(this.repo, tx, resourceId, snapshot),
  };

  /** PUT /auth/sidebar/preferences: rules 1 and 2 of the spec; role writes set-based. */
  private readonly updateCommand: CommandDefinition<PreferencesUpdateInput, SidebarPreferencesUpdateResponse> = {
    ...this.preferenceCommandBase,
    id: 'auth.sidebar.preferences.update',
    features: [SIDEBAR_MANAGE_FEATURE],
    label: 'Save sidebar preferences',
    actionType: 'edit',
    targetId: (input) => input.resourceId,
    execute: async (tx, auth, input) => {
      const { locale, settings, scope, applyToRoles, clearRoleIds } = input;
      const tenant = scopeOf(auth);
      if (scope.type === 'role') {
        const role = await this.requireRole(tx, tenant, scope.roleId);
        await this.repo.upsertRoleSettings(tx, tenant, { roleIds: [role.id], locale, settings });
        const response = await this.respond(tx, auth, locale, settings, { type: 'role', roleId: role.id });
        return { resourceId: input.resourceId, result: { ...response, appliedRoles: [], clearedRoles: [] } };
      }
      const targets = [...applyToRoles, ...clearRoleIds];
      const visible = await this.repo.visibleRoleIds(tx, tenant, targets);
      const missing = targets.filter((id) => !visible.has(id));
      if (missing.length > 0) throw DomainError.notFound(`role not found: ${missing.join(', ')}`);
      await this.repo.upsertUserSettings(tx, tenant, { locale, settings });
      await this.repo.upsertRoleSettings(tx, tenant, { roleIds: applyToRoles, locale, settings });
      await this.repo.deleteRoleSettings(tx, tenant, { roleIds: clearRoleIds, locale });
      const response = await this.respond(tx, auth, locale, settings, { type: 'user' });
      return {
        resourceId: input.resourceId,
        parent: { kind: 'auth.user', id: auth.userId },
        result: { ...response, appliedRoles: applyToRoles, clearedRoles: clearRoleIds },
      };
    },
  };

  /** DELETE /auth/sidebar/preferences: a role's preference for the caller's tenant and locale. */
  private readonly deleteCommand: CommandDefinition<RolePreferenceDeleteInput, { ok: true; scope: SidebarScope }> = {
    ...this.preferenceCommandBase,
    id: 'auth.sidebar.preferences.delete',
    features: [SIDEBAR_MANAGE_FEATURE],
    label: 'Remove role sidebar preferences',
    actionType: 'delete',
    targetId: (input) => input.resourceId,
    execute: async (tx, auth, input) => {
      const tenant = scopeOf(auth);
      const role = await this.requireRole(tx, tenant, input.roleId);
      await this.repo.deleteRoleSettings(tx, tenant, { roleIds: [role.id], locale: input.locale });
      return { resourceId: input.resourceId, result: { ok: true, scope: { type: 'role', roleId: role.id } } };
    },
  };

  /** The caller's preferences, or (with roleId, for managers) a role's. */
  async get(auth: AuthContext, roleId: unknown): Promise<SidebarPreferencesResponse> {
    const db = this.dataSource;
    const scope = scopeOf(auth);
    const locale = await callerLocale(this.repo, db, scope);
    if (roleId === undefined || roleId === '') {
      const settings = await this.repo.userSettings(db, scope, locale);
      return this.respond(db, auth, locale, settings, { type: 'user' });
    }
    if (!auth.can(SIDEBAR_MANAGE_FEATURE)) throw DomainError.forbidden(`missing required features: ${SIDEBAR_MANAGE_FEATURE}`);
    if (typeof roleId !== 'string' || !UUID.test(roleId)) throw DomainError.badRequest('roleId must be a UUID');
    const role = await this.requireRole(db, scope, roleId);
    const settings = await this.repo.roleSettings(db, scope, { roleId: role.id, locale });
    return this.respond(db, auth, locale, settings, { type: 'role', roleId: role.id });
  }

  /**
   * Rules 1 and 2 of the spec, as the undoable command `auth.sidebar.preferences.update`: every write in
   * one transaction, role writes set-based. The resource is the caller's row (`user`), the role's row
   * (`role`), or, when roles are applied or cleared, the caller's row with the tenant's role rows of the
   * locale (`user+roles`), so one undo restores all of them.
   */
  async update(auth: AuthContext, input: UpdateSidebarPreferencesDto): Promise<SidebarPreferencesUpdateResponse> {
    const settings = normalizeSidebarSettings(input.settings);
    const applyToRoles = [...new Set((input.applyToRoles ?? []).map((id) => id.toLowerCase()))];
    const requestedClears = [...new Set((input.clearRoleIds ?? []).map((id) => id.toLowerCase()))];
    const requestedScope = input.scope ?? { type: 'user' as const };
    if (requestedScope.type === 'role' && (applyToRoles.length > 0 || requestedClears.length > 0)) {
      throw DomainError.badRequest('applyToRoles and clearRoleIds are not accepted in role scope');
    }
    const scope: SidebarScope =
      requestedScope.type === 'role' ? { type: 'role', roleId: requestedScope.roleId!.toLowerCase() } : { type: 'user' };
    // A role both applied and cleared keeps the applied settings.
    const clearRoleIds = requestedClears.filter((id) => !applyToRoles.includes(id));
    const locale = await callerLocale(this.repo, this.dataSource, scopeOf(auth));
    const resourceId = preferenceResourceId({
      tenantId: auth.tenantId,
      kind: scope.type === 'role' ? 'role' : applyToRoles.length + clearRoleIds.length > 0 ? 'user+roles' : 'user',
      subjectId: scope.type === 'role' ? scope.roleId : auth.userId,
      locale,
    });
    return this.bus.execute(auth, this.updateCommand, { resourceId, locale, settings, scope, applyToRoles, clearRoleIds });
  }

  /** Removes a role's preferences for the caller's tenant and locale (command `auth.sidebar.preferences.delete`); idempotent. */
  async removeRolePreference(auth: AuthContext, roleId: string): Promise<{ ok: true; scope: SidebarScope }> {
    const locale = await callerLocale(this.repo, this.dataSource, scopeOf(auth));
    const resourceId = preferenceResourceId({ tenantId: auth.tenantId, kind: 'role', subjectId: roleId, locale });
    return this.bus.execute(auth, this.deleteCommand, { resourceId, locale, roleId });
  }

  private async requireRole(db: Db, scope: TenantScope, roleId: string): Promise<{ id: string; name: string }> {
    const role = await this.repo.findVisibleRole(db, scope, roleId);
    if (!role) throw DomainError.notFound('role not found');
    return role;
  }

  private async respond(
    db: Db,
    auth: AuthContext,
    locale: string,
    settings: SidebarSettings | null,
    scope: SidebarScope,
  ): Promise<SidebarPreferencesResponse> {
    const canApplyToRoles = auth.can(SIDEBAR_MANAGE_FEATURE);
    return {
      locale,
      settings: settings ?? emptySidebarSettings(),
      canApplyToRoles,
      roles: canApplyToRoles ? await this.repo.rolesWithPreference(db, scopeOf(auth), locale) : [],
      scope,
    };
  }
}
