import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';

/**
 * Snapshots and inverses of the sidebar commands. Rows are addressed by natural keys (tenant, user or
 * role, locale), never by row id, so a create, its undo (row deleted) and its redo (row inserted again)
 * all name the same resource. Timestamps are kept to the microsecond, so a restore writes back exactly
 * the rows that were there.
 */

/** `created_at` and friends as ISO strings with the database's full (microsecond) precision. */
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

// ---------------------------------------------------------------------------------------------------
// Preferences (`auth.sidebar_preference`)
// ---------------------------------------------------------------------------------------------------

/**
 * - `user`: the user's own preference (tenant, user, locale);
 * - `role`: a role's preference (tenant, role, locale);
 * - `user+roles`: a user-scope save that also applies or clears role preferences: the user's row plus
 *   every role row of the tenant and locale (a superset of the rows it touched, all that undo needs).
 */
export type PreferenceResourceKind = 'user' | 'role' | 'user+roles';

export interface PreferenceKey {
  tenantId: string;
  kind: PreferenceResourceKind;
  /** The user (user, user+roles) or the role (role). */
  subjectId: string;
  locale: string;
}

/** `${tenantId}:${kind}:${userOrRoleId}:${locale}`, lower-case ids. */
export function preferenceResourceId(key: PreferenceKey): string {
  return `${key.tenantId.toLowerCase()}:${key.kind}:${key.subjectId.toLowerCase()}:${key.locale}`;
}

const PREFERENCE_ID = /^([0-9a-f-]{36}):(user|role|user\+roles):([0-9a-f-]{36}):(.+)$/;

export function parsePreferenceResourceId(resourceId: string): PreferenceKey {
  const m = PREFERENCE_ID.exec(resourceId);
  if (!m) throw DomainError.badRequest('malformed sidebar preference resource id');
  return { tenantId: m[1], kind: m[2] as PreferenceResourceKind, subjectId: m[3], locale: m[4] };
}

interface PreferenceRowSnapshot {
  settings: unknown;
  createdAt: string;
}

interface RolePreferenceSnapshot extends PreferenceRowSnapshot {
  roleId: string;
}

/**
 * Serialises the writers of the same rows for the rest of the transaction: a user's own row, and the
 * role rows of a tenant and locale (user lock first, so two lockers never wait on each other in turn).
 */
async function lockPreferences(tx: EntityManager, key: PreferenceKey): Promise<void> {
  if (key.kind !== 'role') {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
      `sidebar-pref:user:${key.tenantId}:${key.subjectId}:${key.locale}`,
    ]);
  }
  if (key.kind !== 'user') {
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sidebar-pref:roles:${key.tenantId}:${key.locale}`]);
  }
}

async function preferenceRow(
  tx: EntityManager,
  key: PreferenceKey,
  scope: 'user' | 'role',
  subjectId: string,
): Promise<PreferenceRowSnapshot | null> {
  const [row] = await tx.query(
    `SELECT settings, ${iso('created_at')} AS "createdAt" FROM sidebar_preferences
      WHERE tenant_id = $1 AND scope = $2 AND ${scope === 'user' ? 'user_id' : 'role_id'} = $3 AND locale = $4`,
    [key.tenantId, scope, subjectId, key.locale],
  );
  return row ? { settings: row.settings, createdAt: row.createdAt } : null;
}

export async function snapshotPreferences(tx: EntityManager, resourceId: string): Promise<Snapshot | null> {
  const key = parsePreferenceResourceId(resourceId);
  await lockPreferences(tx, key);
  if (key.kind === 'role') {
    const row = await preferenceRow(tx, key, 'role', key.subjectId);
    return row && { tenantId: key.tenantId, scope: 'role', roleId: key.subjectId, locale: key.locale, ...row };
  }
  const own = await preferenceRow(tx, key, 'user', key.subjectId);
  const base = { tenantId: key.tenantId, scope: 'user', userId: key.subjectId, locale: key.locale };
  if (key.kind === 'user') return own && { ...base, ...own };
  const roles: RolePreferenceSnapshot[] = await tx.query(
    `SELECT role_id AS "roleId", settings, ${iso('created_at')} AS "createdAt" FROM sidebar_preferences
      WHERE tenant_id = $1 AND scope = 'role' AND locale = $2 ORDER BY role_id`,
    [key.tenantId, key.locale],
  );
  return { ...base, settings: own?.settings ?? null, createdAt: own?.createdAt ?? null, roles };
}

/** Inserts, updates (only when different) or deletes one preference row. */
async function putPreferenceRow(
  tx: EntityManager,
  key: PreferenceKey,
  scope: 'user' | 'role',
  subjectId: string,
  row: PreferenceRowSnapshot | null,
): Promise<void> {
  const column = scope === 'user' ? 'user_id' : 'role_id';
  if (!row) {
    await tx.query(`DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = $2 AND ${column} = $3 AND locale = $4`, [
      key.tenantId,
      scope,
      subjectId,
      key.locale,
    ]);
    return;
  }
  await tx.query(
    `INSERT INTO sidebar_preferences (tenant_id, scope, ${column}, locale, settings, created_at)
     VALUES ($1, $2, $3, $4, $5::jsonb, $6)
     ON CONFLICT (tenant_id, ${column}, locale) WHERE scope = '${scope}'
     DO UPDATE SET settings = EXCLUDED.settings, updated_at = now()
     WHERE sidebar_preferences.settings IS DISTINCT FROM EXCLUDED.settings`,
    [key.tenantId, scope, subjectId, key.locale, JSON.stringify(row.settings), row.createdAt],
  );
}

/** Makes the rows the resource covers equal to the snapshot (null: none of them). */
export async function restorePreferences(tx: EntityManager, resourceId: string, snapshot: Snapshot | null): Promise<void> {
  const key = parsePreferenceResourceId(resourceId);
  await lockPreferences(tx, key);
  if (key.kind === 'role') {
    await putPreferenceRow(tx, key, 'role', key.subjectId, snapshot as PreferenceRowSnapshot | null);
    return;
  }
  const own = snapshot && snapshot.settings !== null ? (snapshot as unknown as PreferenceRowSnapshot) : null;
  await putPreferenceRow(tx, key, 'user', key.subjectId, own);
  if (key.kind === 'user') return;
  const roles = ((snapshot?.roles ?? []) as RolePreferenceSnapshot[]).filter((r) => r.roleId);
  await tx.query(`DELETE FROM sidebar_preferences WHERE tenant_id = $1 AND scope = 'role' AND locale = $2 AND role_id <> ALL($3::uuid[])`, [
    key.tenantId,
    key.locale,
    roles.map((r) => r.roleId),
  ]);
  for (const role of roles) {
    const [exists] = await tx.query('SELECT 1 FROM roles WHERE id = $1', [role.roleId]);
    if (exists) await putPreferenceRow(tx, key, 'role', role.roleId, role);
  }
}

// ---------------------------------------------------------------------------------------------------
// Variants (`auth.sidebar_variants`): the whole variant set of a user, tenant and locale
// ---------------------------------------------------------------------------------------------------

export interface VariantSetKey {
  tenantId: string;
  userId: string;
  locale: string;
}

/** `${tenantId}:${userId}:${locale}`, lower-case ids. */
export function variantSetResourceId(key: VariantSetKey): string {
  return `${key.tenantId.toLowerCase()}:${key.userId.toLowerCase()}:${key.locale}`;
}

const VARIANT_SET_ID = /^([0-9a-f-]{36}):([0-9a-f-]{36}):(.+)$/;

export function parseVariantSetResourceId(resourceId: string): VariantSetKey {
  const m = VARIANT_SET_ID.exec(resourceId);
  if (!m) throw DomainError.badRequest('malformed sidebar variant set resource id');
  return { tenantId: m[1], userId: m[2], locale: m[3] };
}

interface VariantSnapshot {
  id: string;
  name: string;
  isActive: boolean;
  settings: unknown;
  createdAt: string;
  updatedAt: string | null;
}

/** The same advisory lock as `SidebarRepository.lockVariants`: variant writers of one user run one at a time. */
async function lockVariantSet(tx: EntityManager, key: VariantSetKey): Promise<void> {
  await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`sidebar-variants:${key.tenantId}:${key.userId}:${key.locale}`]);
}

/** Every variant of the set (sorted by id) and which one is active; null when the set is empty. */
export async function snapshotVariantSet(tx: EntityManager, resourceId: string): Promise<Snapshot | null> {
  const key = parseVariantSetResourceId(resourceId);
  await lockVariantSet(tx, key);
  const variants: VariantSnapshot[] = await tx.query(
    `SELECT id, name, is_active AS "isActive", settings, ${iso('created_at')} AS "createdAt",
            ${iso('updated_at')} AS "updatedAt"
       FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 ORDER BY id`,
    [key.tenantId, key.userId, key.locale],
  );
  if (variants.length === 0) return null;
  return { ...key, activeVariantId: variants.find((v) => v.isActive)?.id ?? null, variants };
}

/** Makes the set equal to the snapshot: extra variants deleted, the others written back as they were. */
export async function restoreVariantSet(tx: EntityManager, resourceId: string, snapshot: Snapshot | null): Promise<void> {
  const key = parseVariantSetResourceId(resourceId);
  await lockVariantSet(tx, key);
  const variants = (snapshot?.variants ?? []) as VariantSnapshot[];
  await tx.query('DELETE FROM sidebar_variants WHERE tenant_id = $1 AND user_id = $2 AND locale = $3 AND id <> ALL($4::uuid[])', [
    key.tenantId,
    key.userId,
    key.locale,
    variants.map((v) => v.id),
  ]);
  if (variants.length === 0) return;
  await tx.query(
    `INSERT INTO sidebar_variants (id, tenant_id, user_id, locale, name, is_active, settings, created_at, updated_at)
     SELECT v.id, $1, $2, $3, v.name, v."isActive", v.settings, v."createdAt", v."updatedAt"
       FROM jsonb_to_recordset($4::jsonb) AS v(id uuid, name text, "isActive" boolean, settings jsonb, "createdAt" timestamptz, "updatedAt" timestamptz)
     ON CONFLICT (id) DO UPDATE
       SET name = EXCLUDED.name, is_active = EXCLUDED.is_active, settings = EXCLUDED.settings,
           created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at
     WHERE (sidebar_variants.name, sidebar_variants.is_active, sidebar_variants.settings, sidebar_variants.created_at, sidebar_variants.updated_at)
           IS DISTINCT FROM (EXCLUDED.name, EXCLUDED.is_active, EXCLUDED.settings, EXCLUDED.created_at, EXCLUDED.updated_at)`,
    [key.tenantId, key.userId, key.locale, JSON.stringify(variants)],
  );
}
