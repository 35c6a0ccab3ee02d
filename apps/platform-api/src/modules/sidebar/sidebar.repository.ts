import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { normalizeSidebarSettings, type SidebarSettings } from './sidebar-settings.js';

/** Anything that runs SQL: the data source's manager, or a transaction's. */
export type Sql = Pick<EntityManager, 'query'>;

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

// Roles visible in a tenant are its own and the global ones (tenant_id null). Written against the
// expression of the roles_tenant_name_uq index so the lookup can use it.
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const VISIBLE_ROLE = `COALESCE(r.tenant_id, '${NIL_UUID}'::uuid) IN ($1::uuid, '${NIL_UUID}'::uuid)`;

/** The SQL of sidebar preferences and variants; every query is scoped by tenant. */
@Injectable()
export class SidebarRepository {
  async userLocale(db: Sql, tenantId: string, userId: string): Promise<string | null> {
    const [row] = await db.query('SELECT locale FROM users WHERE id = $1 AND tenant_id = $2', [userId, tenantId]);
    return row?.locale ?? null;
  }

  async findVisibleRole(db: Sql, tenantId: string, roleId: string): Promise<{ id: string; name: string } | null> {
    const [row] = await db.query(`SELECT r.id, r.name FROM roles r WHERE ${VISIBLE_ROLE} AND r.id = $2`, [tenantId, roleId]);
    return row ?? null;
  }

  /** Which of these role ids are visible in the tenant. */
  async visibleRoleIds(db: Sql, tenantId: string, roleIds: string[]): Promise<Set<string>> {
    if (roleIds.length === 0) return new Set();
    const rows: { id: string }[] = await db.query(`SELECT r.id FROM roles r WHERE ${VISIBLE_ROLE} AND r.id = ANY($2::uuid[])`, [
      tenantId,
      roleIds,
    ]);
    return new Set(rows.map((r) => r.id));
  }

  async rolesWithPreference(db: Sql, tenantId: string, locale: string): Promise<SidebarRoleEntry[]> {
    const rows: { id: string; name: string; has_preference: boolean }[] = await db.query(
      `SELECT r.id, r.name,
              EXISTS (SELECT 1 FROM sidebar_preferences p
                       WHERE p.tenant_id = $1 AND p.scope = 'role' AND p.role_id = r.id AND p.locale = $2) AS has_preference
         FROM roles r
        WHERE ${VISIBLE_ROLE}
        ORDER BY lower(r.name), r.id`,
      [tenantId, locale],
    );
    return rows.map((r) => ({ id: r.id, name: r.name, hasPreference: r.has_preference }));
  }

  async userSettings(db: Sql, tenantId: string, userId: string, locale: string): Promise<SidebarSettings | null> {
    const [row] = await db.query(
      `SELECT settings FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'user' AND user_id = $2 AND locale = $3`,
      [tenantId, userId, locale],
    );
    return row ? normalizeSidebarSettings(row.settings) : null;
  }

  async roleSettings(db: Sql, tenantId: string, roleId: string, locale: string): Promise<SidebarSettings | null> {
    const [row] = await db.query(
      `SELECT settings FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND role_id = $2 AND locale = $3`,
      [tenantId, roleId, locale],
    );
    return row ? normalizeSidebarSettings(row.settings) : null;
  }

  async upsertUserSettings(db: Sql, tenantId: string, userId: string, locale: string, settings: SidebarSettings): Promise<void> {
    await db.query(
      `INSERT INTO sidebar_preferences (tenant_id, scope, user_id, locale, settings)
       VALUES ($1, 'user', $2, $3, $4::jsonb)
       ON CONFLICT (tenant_id, user_id, locale) WHERE scope = 'user'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
      [tenantId, userId, locale, JSON.stringify(settings)],
    );
  }

  /** One statement for any number of roles. */
  async upsertRoleSettings(db: Sql, tenantId: string, roleIds: string[], locale: string, settings: SidebarSettings): Promise<void> {
    if (roleIds.length === 0) return;
    await db.query(
      `INSERT INTO sidebar_preferences (tenant_id, scope, role_id, locale, settings)
       SELECT $1, 'role', role_id, $3, $4::jsonb FROM unnest($2::uuid[]) AS role_id
       ON CONFLICT (tenant_id, role_id, locale) WHERE scope = 'role'
       DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()`,
      [tenantId, roleIds, locale, JSON.stringify(settings)],
    );
  }

  async deleteRoleSettings(db: Sql, tenantId: string, roleIds: string[], locale: string): Promise<void> {
    if (roleIds.length === 0) return;
    await db.query(
      `DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND role_id = ANY($2::uuid[]) AND locale = $3`,
      [tenantId, roleIds, locale],
    );
  }

  async listVariants(db: Sql, tenantId: string, userId: string, locale: string): Promise<SidebarVariantRow[]> {
    return db.query(
      `SELECT id, name, is_active, settings, created_at, updated_at FROM sidebar_variants
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3
        ORDER BY created_at, name`,
      [tenantId, userId, locale],
    );
  }

  /** Serialises variant writes of one user (tenant, locale) until the transaction ends. */
  async lockVariants(tx: Sql, tenantId: string, userId: string, locale: string): Promise<void> {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sidebar-variants:${tenantId}:${userId}:${locale}`]);
  }

  /** Names of the form `base` or `base N` already taken. */
  async takenAutoNames(db: Sql, tenantId: string, userId: string, locale: string, base: string): Promise<string[]> {
    const rows: { name: string }[] = await db.query(
      `SELECT name FROM sidebar_variants
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND (name = $4 OR name LIKE $5)`,
      [tenantId, userId, locale, base, `${base} %`],
    );
    return rows.map((r) => r.name);
  }

  async variantNameExists(db: Sql, tenantId: string, userId: string, locale: string, name: string): Promise<boolean> {
    const rows = await db.query('SELECT 1 FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND name = $4', [
      tenantId,
      userId,
      locale,
      name,
    ]);
    return rows.length > 0;
  }

  async deactivateVariants(db: Sql, tenantId: string, userId: string, locale: string): Promise<void> {
    await db.query(
      `UPDATE sidebar_variants SET is_active = false, updated_at = now()
        WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND is_active`,
      [tenantId, userId, locale],
    );
  }

  async insertVariant(
    db: Sql,
    row: { tenantId: string; userId: string; locale: string; name: string; isActive: boolean; settings: SidebarSettings },
  ): Promise<SidebarVariantRow> {
    const [inserted] = await db.query(
      `INSERT INTO sidebar_variants (tenant_id, user_id, locale, name, is_active, settings)
       VALUES ($1, $2, $3, $4, $5, $6::jsonb)
       RETURNING id, name, is_active, settings, created_at, updated_at`,
      [row.tenantId, row.userId, row.locale, row.name, row.isActive, JSON.stringify(row.settings)],
    );
    return inserted;
  }
}
