import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import { systemScope, type TenantScope } from '../../core/scope/tenant-scope.js';
import type { PreferenceRowSnapshot, RolePreferenceSnapshot, SidebarRepository, VariantSnapshot } from './sidebar.repository.js';

/**
 * Snapshots and inverses of the sidebar commands (their SQL is in SidebarRepository). Rows are
 * addressed by natural keys (tenant, user or role, locale), never by row id, so a create, its undo
 * (row deleted) and its redo (row inserted again) all name the same resource. Timestamps are kept to
 * the microsecond, so a restore writes back exactly the rows that were there.
 */

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

/** The scope of a resource's rows: its tenant, and its user when a user owns them. */
function scopeOfKey(tenantId: string, userId: string | null): TenantScope {
  return { ...systemScope(tenantId), userId };
}

/**
 * Serialises the writers of the same rows for the rest of the transaction: a user's own row, and the
 * role rows of a tenant and locale (user lock first, so two lockers never wait on each other in turn).
 */
async function lockPreferences(repo: SidebarRepository, tx: EntityManager, key: PreferenceKey): Promise<void> {
  const scope = scopeOfKey(key.tenantId, null);
  if (key.kind !== 'role') await repo.lockUserPreference(tx, scope, { userId: key.subjectId, locale: key.locale });
  if (key.kind !== 'user') await repo.lockRolePreferences(tx, scope, key.locale);
}

export async function snapshotPreferences(repo: SidebarRepository, tx: EntityManager, resourceId: string): Promise<Snapshot | null> {
  const key = parsePreferenceResourceId(resourceId);
  const scope = scopeOfKey(key.tenantId, null);
  await lockPreferences(repo, tx, key);
  if (key.kind === 'role') {
    const row = await repo.preferenceRow(tx, scope, { owner: 'role', subjectId: key.subjectId, locale: key.locale });
    return row && { tenantId: key.tenantId, scope: 'role', roleId: key.subjectId, locale: key.locale, ...row };
  }
  const own = await repo.preferenceRow(tx, scope, { owner: 'user', subjectId: key.subjectId, locale: key.locale });
  const base = { tenantId: key.tenantId, scope: 'user', userId: key.subjectId, locale: key.locale };
  if (key.kind === 'user') return own && { ...base, ...own };
  const roles = await repo.rolePreferenceRows(tx, scope, key.locale);
  return { ...base, settings: own?.settings ?? null, createdAt: own?.createdAt ?? null, roles };
}

/** Makes the rows the resource covers equal to the snapshot (null: none of them). */
export async function restorePreferences(
  repo: SidebarRepository,
  tx: EntityManager,
  resourceId: string,
  snapshot: Snapshot | null,
): Promise<void> {
  const key = parsePreferenceResourceId(resourceId);
  const scope = scopeOfKey(key.tenantId, null);
  await lockPreferences(repo, tx, key);
  if (key.kind === 'role') {
    const row = snapshot as PreferenceRowSnapshot | null;
    await repo.putPreferenceRow(tx, scope, { owner: 'role', subjectId: key.subjectId, locale: key.locale, row });
    return;
  }
  const own = snapshot && snapshot.settings !== null ? (snapshot as unknown as PreferenceRowSnapshot) : null;
  await repo.putPreferenceRow(tx, scope, { owner: 'user', subjectId: key.subjectId, locale: key.locale, row: own });
  if (key.kind === 'user') return;
  const roles = ((snapshot?.roles ?? []) as RolePreferenceSnapshot[]).filter((r) => r.roleId);
  await repo.restoreRolePreferences(tx, scope, { locale: key.locale, roles });
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

/** Every variant of the set (sorted by id) and which one is active; null when the set is empty. */
export async function snapshotVariantSet(repo: SidebarRepository, tx: EntityManager, resourceId: string): Promise<Snapshot | null> {
  const key = parseVariantSetResourceId(resourceId);
  const scope = scopeOfKey(key.tenantId, key.userId);
  // The same lock as the create command's: variant writers of one user run one at a time.
  await repo.lockVariants(tx, scope, key.locale);
  const variants = await repo.variantSet(tx, scope, key.locale);
  if (variants.length === 0) return null;
  return { ...key, activeVariantId: variants.find((v) => v.isActive)?.id ?? null, variants };
}

/** Makes the set equal to the snapshot: extra variants deleted, the others written back as they were. */
export async function restoreVariantSet(
  repo: SidebarRepository,
  tx: EntityManager,
  resourceId: string,
  snapshot: Snapshot | null,
): Promise<void> {
  const key = parseVariantSetResourceId(resourceId);
  const scope = scopeOfKey(key.tenantId, key.userId);
  await repo.lockVariants(tx, scope, key.locale);
  await repo.restoreVariantSet(tx, scope, { locale: key.locale, variants: (snapshot?.variants ?? []) as VariantSnapshot[] });
}
