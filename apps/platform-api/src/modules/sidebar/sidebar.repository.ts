import { Injectable } from '@nestjs/common';
import { execute, query, queryOne, type Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { normalizeSidebarSettings, type SidebarSettings } from './sidebar-settings.js';

export interface SidebarRoleEntry {
  id: string;
  name: string;
  hasPreference: boolean;
}

export interface SidebarVariantRow {
  id: string;
  name: string;
  is_active: boolean;
  settings: unknown;
  created_at: Date;
  updated_at: Date | null;
}

/** Whose preference row: a user's own, or a role's. */
export type PreferenceOwner = 'user' | 'role';

/** A preference row as a snapshot holds it (timestamps to the microsecond, see `iso`). */
export interface PreferenceRowSnapshot {
  settings: unknown;
  createdAt: string;
}

export interface RolePreferenceSnapshot extends PreferenceRowSnapshot {
  roleId: string;
}

/** A variant as a snapshot holds it. */
export interface VariantSnapshot {
  id: string;
  name: string;
  isActive: boolean;
  settings: unknown;
  createdAt: string;
  updatedAt: string | null;
}

// Roles visible in a tenant are its own and the global ones (tenant_id null). Written against the
// expression of the roles_tenant_name_uq index so the lookup can use it.
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const VISIBLE_ROLE = `COALESCE(r.tenant_id, '${NIL_UUID}'::uuid) IN ($1::uuid, '${NIL_UUID}'::uuid)`;

/** `created_at` and friends as ISO strings with the database's full (microsecond) precision. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

const OWNER_COLUMN: Record<PreferenceOwner, string> = { user: 'user_id', role: 'role_id' };

/** The user whose own rows a call reads or writes: the scope's. */
function userOf(scope: TenantScope): string {
  if (!scope.userId) throw new Error('sidebar preferences and variants of a user need the scope of that user');
  return scope.userId;
}

/**
 * The one writer of `sidebar_preferences` and `sidebar_variants` (the API's writes and the undo and
 * redo restores). Every query is scoped by the scope's tenant; rows belong to a user or a role, not
 * to an organization, so the scope's organizations do not narrow them.
 */
@Injectable()
export class SidebarRepository {
  async userLocale(db: Db, scope: TenantScope): Promise<string | null> {
    const row = await queryOne<{ locale: string | null }>(db, 'SELECT locale FROM users WHERE id = $1 AND tenant_id = $2', [
      userOf(scope),
      scope.tenantId,
    ]);
    return row?.locale ?? null;
  }

  findVisibleRole(db: Db, scope: TenantScope, roleId: string): Promise<{ id: string; name: string } | null> {
    return queryOne<{ id: string; name: string }>(db, `SELECT r.id, r.name FROM roles r WHERE ${VISIBLE_ROLE} AND r.id = $2`, [
      scope.tenantId,
      roleId,
    ]);
  }

  /** Which of these role ids are visible in the tenant. */
  async visibleRoleIds(db: Db, scope: TenantScope, roleIds: string[]): Promise<Set<string>> {
    if (roleIds.length === 0) return new Set();
    const rows = await query<{ id: string }>(db, `SELECT r.id FROM roles r WHERE ${VISIBLE_ROLE} AND r.id = ANY($2::uuid[])`, [
      scope.tenantId,
      roleIds,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  async rolesWithPreference(db: Db, scope: TenantScope, locale: string): Promise<SidebarRoleEntry[]> {
    const rows = await query<{ id: string; name: string; has_preference: boolean }>(
      db,
      `SELECT r.id, r.name,
              EXISTS (SELECT 1 FROM sidebar_preferences p
                       WHERE p.tenant_id = $1 AND p.scope = 'role' AND p.role_id = r.id AND p.locale = $2) AS has_preference
         FROM roles r
        WHERE ${VISIBLE_ROLE}
        ORDER BY lower(r.name), r.id`,
      [scope.tenantId, locale],
    );
    return rows.map((r) => ({ id: r.id, name: r.name, hasPreference: r.has_preference }));
  }

  /** The scope user's own settings for the locale. */
  async userSettings(db: Db, scope: TenantScope, locale: string): Promise<SidebarSettings | null> {
    const row = await queryOne<{ settings: unknown }>(
      db,
      `SELECT settings FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'user' AND user_id = $2 AND locale = $3`,
      [scope.tenantId, userOf(scope), locale],
    );
    return row ? normalizeSidebarSettings(row.settings) : null;
  }

  async roleSettings(db: Db, scope: TenantScope, input: { roleId: string; locale: string }): Promise<SidebarSettings | null> {
    const row = await queryOne<{ settings: unknown }>(
      db,
      `SELECT settings FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND role_id = $2 AND locale = $3`,
      [scope.tenantId, input.roleId, input.locale],
    );
    return row ? normalizeSidebarSettings(row.settings) : null;
  }

  async upsertUserSettings(db: Db, scope: TenantScope, input: { locale: string; settings: SidebarSettings }): Promise<void> {
    await execute(
      db,
      `INSERT INTO sidebar_preferences (tenant_id, scope, user_id, locale, settings)
       VALUES ($1, 'user', $2, $3, $4::jsonb)
       ON CONFLICT (tenant_id, user_id, locale) WHERE scope = 'user'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
      [scope.tenantId, userOf(scope), input.locale, JSON.stringify(input.settings)],
    );
  }

  /** One statement for any number of roles. */
  async upsertRoleSettings(
    db: Db,
    scope: TenantScope,
    input: { roleIds: string[]; locale: string; settings: SidebarSettings },
  ): Promise<void> {
    if (input.roleIds.length === 0) return;
    await execute(
      db,
      `INSERT INTO sidebar_preferences (tenant_id, scope, role_id, locale, settings)
       SELECT $1, 'role', role_id, $3, $4::jsonb FROM unnest($2::uuid[]) AS role_id
       ON CONFLICT (tenant_id, role_id, locale) WHERE scope = 'role'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
      [scope.tenantId, input.roleIds, input.locale, JSON.stringify(input.settings)],
    );
  }

  async deleteRoleSettings(db: Db, scope: TenantScope, input: { roleIds: string[]; locale: string }): Promise<void> {
    if (input.roleIds.length === 0) return;
    await execute(
      db,
      `DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND role_id = ANY($2::uuid[]) AND locale = $3`,
      [scope.tenantId, input.roleIds, input.locale],
    );
  }

  // -------------------------------------------------------------------------------------------------
  // Preferences as the undo and redo of the sidebar commands see them (sidebar-snapshot.ts)
  // -------------------------------------------------------------------------------------------------

  /**
   * Serialises the writers of one user's own row (tenant, user, locale) until the transaction ends.
   * Taken before `lockRolePreferences` when both are, so two lockers never wait on each other in turn.
   */
  async lockUserPreference(tx: Db, scope: TenantScope, input: { userId: string; locale: string }): Promise<void> {
    await advisoryLock(tx, `sidebar-pref:user:${scope.tenantId}:${input.userId}:${input.locale}`);
  }

  /** Serialises the writers of the role rows of a tenant and locale until the transaction ends. */
  async lockRolePreferences(tx: Db, scope: TenantScope, locale: string): Promise<void> {
    await advisoryLock(tx, `sidebar-pref:roles:${scope.tenantId}:${locale}`);
  }

  /** One preference row of the user or role `subjectId`, as a snapshot holds it. */
  preferenceRow(
    db: Db,
    scope: TenantScope,
    input: { owner: PreferenceOwner; subjectId: string; locale: string },
  ): Promise<PreferenceRowSnapshot | null> {
    return queryOne<PreferenceRowSnapshot>(
      db,
      `SELECT settings, ${iso('created_at')} AS "createdAt" FROM sidebar_preferences
        WHERE tenant_id = $1 AND scope = $2 AND ${OWNER_COLUMN[input.owner]} = $3 AND locale = $4`,
      [scope.tenantId, input.owner, input.subjectId, input.locale],
    );
  }

  /** Every role row of the tenant and locale, by role id. */
  rolePreferenceRows(db: Db, scope: TenantScope, locale: string): Promise<RolePreferenceSnapshot[]> {
    return query<RolePreferenceSnapshot>(
      db,
      `SELECT role_id AS "roleId", settings, ${iso('created_at')} AS "createdAt" FROM sidebar_preferences
        WHERE tenant_id = $1 AND scope = 'role' AND locale = $2 ORDER BY role_id`,
      [scope.tenantId, locale],
    );
  }

  /** Inserts, updates (only when different) or deletes (`row` null) one preference row. */
  async putPreferenceRow(
    tx: Db,
    scope: TenantScope,
    input: { owner: PreferenceOwner; subjectId: string; locale: string; row: PreferenceRowSnapshot | null },
  ): Promise<void> {
    const { owner, subjectId, locale, row } = input;
    const column = OWNER_COLUMN[owner];
    if (!row) {
      await execute(tx, `DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = $2 AND ${column} = $3 AND locale = $4`, [
        scope.tenantId,
        owner,
        subjectId,
        locale,
      ]);
      return;
    }
    await execute(
      tx,
      `INSERT INTO sidebar_preferences (tenant_id, scope, ${column}, locale, settings, created_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6)
       ON CONFLICT (tenant_id, ${column}, locale) WHERE scope = '${owner}'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()
       WHERE sidebar_preferences.settings IS DISTINCT FROM EXCLUDED.settings`,
      [scope.tenantId, owner, subjectId, locale, JSON.stringify(row.settings), row.createdAt],
    );
  }

  /**
   * Makes the role rows of the tenant and locale equal to `roles`: the others deleted, these written
   * back (only where different), in one statement each; roles deleted since are skipped.
   */
  async restoreRolePreferences(tx: Db, scope: TenantScope, input: { locale: string; roles: RolePreferenceSnapshot[] }): Promise<void> {
    const { locale, roles } = input;
    await execute(
      tx,
      `DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND locale = $2 AND role_id <> ALL($3::uuid[])`,
      [scope.tenantId, locale, roles.map((r) => r.roleId)],
    );
    if (roles.length === 0) return;
    await execute(
      tx,
      `INSERT INTO sidebar_preferences (tenant_id, scope, role_id, locale, settings, created_at)
       SELECT $1, 'role', p."roleId", $2, p.settings, p."createdAt"
         FROM jsonb_to_recordset($3::jsonb) AS p("roleId" uuid, settings jsonb, "createdAt" timestamptz)
        WHERE EXISTS (SELECT 1 FROM roles r WHERE r.id = p."roleId")
        ORDER BY p."roleId"
       ON CONFLICT (tenant_id, role_id, locale) WHERE scope = 'role'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()
       WHERE sidebar_preferences.settings IS DISTINCT FROM EXCLUDED.settings`,
      [scope.tenantId, locale, JSON.stringify(roles.map((r) => ({ roleId: r.roleId, settings: r.settings, createdAt: r.createdAt })))],
    );
  }

  // -------------------------------------------------------------------------------------------------
  // Variants: the scope user's, per locale
  // -------------------------------------------------------------------------------------------------

  listVariants(db: Db, scope: TenantScope, locale: string): Promise<SidebarVariantRow[]> {
    return query<SidebarVariantRow>(
      db,
      `SELECT id, name, is_active, settings, created_at, updated_at FROM sidebar_variants
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3
        ORDER BY created_at, name`,
      [scope.tenantId, userOf(scope), locale],
    );
  }

  /** Serialises variant writes of the scope user (tenant, locale) until the transaction ends. */
  async lockVariants(tx: Db, scope: TenantScope, locale: string): Promise<void> {
    await advisoryLock(tx, `sidebar-variants:${scope.tenantId}:${userOf(scope)}:${locale}`);
  }

  /** Names of the form `base` or `base N` already taken. */
  async takenAutoNames(db: Db, scope: TenantScope, input: { locale: string; base: string }): Promise<string[]> {
    const rows = await query<{ name: string }>(
      db,
      `SELECT name FROM sidebar_variants
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND (name = $4 OR name LIKE $5)`,
      [scope.tenantId, userOf(scope), input.locale, input.base, `${input.base} %`],
    );
    return rows.map((r) => r.name);
  }

  async variantNameExists(db: Db, scope: TenantScope, input: { locale: string; name: string }): Promise<boolean> {
    const row = await queryOne(db, 'SELECT 1 FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND name = $4', [
      scope.tenantId,
      userOf(scope),
      input.locale,
      input.name,
    ]);
    return row !== null;
  }

  async deactivateVariants(db: Db, scope: TenantScope, locale: string): Promise<void> {
    await execute(
      db,
      `UPDATE sidebar_variants SET is_active = false, updated_at = now()
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND is_active`,
      [scope.tenantId, userOf(scope), locale],
    );
  }

  async insertVariant(
    db: Db,
    scope: TenantScope,
    input: { locale: string; name: string; isActive: boolean; settings: SidebarSettings },
  ): Promise<SidebarVariantRow> {
    const [inserted] = await query<SidebarVariantRow>(
      db,
      `INSERT INTO sidebar_variants (tenant_id, user_id, locale, name, is_active, settings)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       RETURNING id, name, is_active, settings, created_at, updated_at`,
      [scope.tenantId, userOf(scope), input.locale, input.name, input.isActive, JSON.stringify(input.settings)],
    );
    return inserted;
  }

  /** Every variant of the scope user and locale, by id, as a snapshot holds them. */
  variantSet(db: Db, scope: TenantScope, locale: string): Promise<VariantSnapshot[]> {
    return query<VariantSnapshot>(
      db,
      `SELECT id, name, is_active AS "isActive", settings, ${iso('created_at')} AS "createdAt",
              ${iso('updated_at')} AS "updatedAt"
         FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 ORDER BY id`,
      [scope.tenantId, userOf(scope), locale],
    );
  }

  /** Makes the variant set equal to `variants`: extra variants deleted, the others written back as they were. */
  async restoreVariantSet(tx: Db, scope: TenantScope, input: { locale: string; variants: VariantSnapshot[] }): Promise<void> {
    const { locale, variants } = input;
    const userId = userOf(scope);
    await execute(tx, 'DELETE FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND id <> ALL($4::uuid[])', [
      scope.tenantId,
      userId,
      locale,
      variants.map((v) => v.id),
    ]);
    if (variants.length === 0) return;
    await execute(
      tx,
      `INSERT INTO sidebar_variants (id, tenant_id, user_id, locale, name, is_active, settings, created_at, updated_at)
       SELECT v.id, $1, $2, $3, v.name, v."isActive", v.settings, v."createdAt", v."updatedAt"
         FROM jsonb_to_recordset($4::jsonb) AS v(id uuid, name text, "isActive" boolean, settings jsonb, "createdAt" timestamptz, "updatedAt" timestamptz)
       ON CONFLICT (id) DO UPDATE
         SET name = EXCLUDED.name, is_active = EXCLUDED.is_active, settings = EXCLUDED.settings,
             created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
       WHERE (sidebar_variants.name, sidebar_variants.is_active, sidebar_variants.settings, sidebar_variants.created_at, sidebar_variants.updated_at)
             IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.is_active, EXCLUDED.settings, EXCLUDED.created_at, EXCLUDED.updated_at)`,
      [scope.tenantId, userId, locale, JSON.stringify(variants)],
    );
  }
}

/** A transaction-scoped advisory lock on `key` (released at commit or rollback). */
async function advisoryLock(tx: Db, key: string): Promise<void> {
  await query(tx, 'SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [key]);
}
