import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot, SnapshotScope } from '../../core/audit/command.js';
import type { StoredAcl } from './acls.repository.js';
import { restoreRole, snapshotRole } from './role-snapshot.js';

/**
 * Snapshots and inverses of the ACL commands (`auth.roles.acl.update`, `auth.users.acl.update`).
 *
 * Each snapshot first locks the row the command's writers lock (the role, the user), so the snapshot
 * the bus takes before `execute` is the state the write really started from: a concurrent writer of the
 * same ACL waits for us instead of committing between our "before" and our write.
 */

/**
 * A role ACL write is recorded as the role (`snapshotRole`) with its ACL and members in the tenant
 * whose ACL is written (the command's scope): never another tenant's of a global role.
 */
export async function snapshotRoleForAcl(
  tx: EntityManager,
  roleId: string,
  options: { tenantId?: string | null } = {},
): Promise<Snapshot | null> {
  await tx.query('SELECT 1 FROM roles WHERE id = $1 FOR NO KEY UPDATE', [roleId]);
  return snapshotRole(tx, roleId, { tenantId: options.tenantId ?? null });
}

/**
 * Makes the role's ACLs (of the scope's tenant; every tenant for an unscoped entry) equal to those of
 * the snapshot; rows that already match are left alone. The name and memberships are not this
 * command's: the bus has checked they still equal the other snapshot, and rewriting them could lose a
 * membership committed meanwhile.
 */
export async function restoreRoleAcls(
  tx: EntityManager,
  roleId: string,
  snapshot: Snapshot | null,
  scope: SnapshotScope = { tenantId: null },
): Promise<void> {
  if (!snapshot) {
    // Never recorded by an ACL write (the role exists before and after it); kept for the contract.
    await restoreRole(tx, roleId, null, scope);
    return;
  }
  const acls = ((snapshot.acls ?? []) as { tenantId: string }[]).filter((a) => scope.tenantId === null || a.tenantId === scope.tenantId);
  await tx.query(
    'DELETE FROM role_acls WHERE role_id = $1 AND tenant_id <> ALL($2::uuid[]) AND ($3::uuid IS NULL OR tenant_id = $3::uuid)',
    [roleId, acls.map((a) => a.tenantId), scope.tenantId],
  );
  await tx.query(
    `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
     SELECT a."tenantId", $1, a."isSuperAdmin", a.features, a.organizations
       FROM jsonb_to_recordset($2::jsonb) AS a("tenantId" uuid, "isSuperAdmin" boolean, features text[], organizations jsonb)
     ON CONFLICT (tenant_id, role_id) DO UPDATE
       SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
           organizations = EXCLUDED.organizations, updated_at = now()
     WHERE (role_acls.is_super_admin, role_acls.features, role_acls.organizations)
           IS DISTINCT FROM (EXCLUDED.is_super_admin, EXCLUDED.features, EXCLUDED.organizations)`,
    [roleId, JSON.stringify(acls)],
  );
}

/**
 * The user's custom ACL in the user's tenant, or null when it has none (its role ACLs apply).
 * `features` keep their stored order, so a restore writes back exactly the row that was there.
 */
export async function snapshotUserAcl(tx: EntityManager, userId: string): Promise<Snapshot | null> {
  const [user] = await tx.query('SELECT tenant_id FROM users WHERE id = $1 FOR NO KEY UPDATE', [userId]);
  if (!user) return null;
  const [acl] = await tx.query('SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [
    user.tenant_id,
    userId,
  ]);
  if (!acl) return null;
  return {
    userId,
    tenantId: user.tenant_id,
    isSuperAdmin: acl.is_super_admin,
    features: acl.features,
    organizations: acl.organizations,
  };
}

/** Upserts (only if different) or deletes the user's custom ACL; a deleted user's ACL is not brought back. */
export async function restoreUserAcl(tx: EntityManager, userId: string, snapshot: Snapshot | null): Promise<void> {
  const [user] = await tx.query('SELECT tenant_id, deleted_at FROM users WHERE id = $1', [userId]);
  if (!snapshot) {
    if (user) await tx.query('DELETE FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [user.tenant_id, userId]);
    return;
  }
  if (!user || user.deleted_at) throw DomainError.badRequest('the user was deleted; its ACL cannot be restored');
  await writeUserAcl(tx, user.tenant_id, userId, {
    isSuperAdmin: snapshot.isSuperAdmin as boolean,
    features: snapshot.features as string[],
    organizations: (snapshot.organizations as string[] | null | undefined) ?? null,
  });
}

/**
 * Makes the user's ACL row equal to `acl` (null: no custom ACL). An unchanged row is not written, so
 * its `updated_at` keeps telling when the ACL last really changed. Used by undo/redo of user ACLs and
 * of users.
 */
export async function writeUserAcl(
  tx: EntityManager,
  tenantId: string,
  userId: string,
  acl: { isSuperAdmin: boolean; features: string[]; organizations: string[] | null } | null,
): Promise<void> {
  if (!acl) {
    await tx.query('DELETE FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
    return;
  }
  await tx.query(
    `INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features, organizations)
     VALUES ($1, $2, $3, $4, $5::jsonb)
     ON CONFLICT (tenant_id, user_id) DO UPDATE
       SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
           organizations = EXCLUDED.organizations, updated_at = now()
     WHERE (user_acls.is_super_admin, user_acls.features, user_acls.organizations)
           IS DISTINCT FROM (EXCLUDED.is_super_admin, EXCLUDED.features, EXCLUDED.organizations)`,
    [tenantId, userId, acl.isSuperAdmin, acl.features, acl.organizations === null ? null : JSON.stringify(acl.organizations)],
  );
}

/** The ACL part of an ACL snapshot (a user ACL, or one entry of a role's `acls`). */
export function aclOf(snapshot: Snapshot): StoredAcl {
  return {
    isSuperAdmin: Boolean(snapshot.isSuperAdmin),
    features: (snapshot.features as string[] | undefined) ?? [],
    organizations: (snapshot.organizations as string[] | null | undefined) ?? null,
  };
}

/** The per-tenant ACLs of a role snapshot (`acls`) that differ between `current` and `target`. */
export function changedRoleAcls(
  current: Snapshot | null,
  target: Snapshot | null,
): { tenantId: string; current: StoredAcl | null; target: StoredAcl | null }[] {
  const byTenant = (snapshot: Snapshot | null) =>
    new Map(((snapshot?.acls ?? []) as (Snapshot & { tenantId: string })[]).map((a) => [a.tenantId, aclOf(a)]));
  const before = byTenant(current);
  const after = byTenant(target);
  return [...new Set([...before.keys(), ...after.keys()])]
    .map((tenantId) => ({ tenantId, current: before.get(tenantId) ?? null, target: after.get(tenantId) ?? null }))
    .filter((c) => JSON.stringify(c.current) !== JSON.stringify(c.target));
}
