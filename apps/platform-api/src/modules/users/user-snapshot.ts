import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import { writeUserAcl } from '../access-control/acl-snapshot.js';

/**
 * A user as the action log records it (`auth.user`): the row, its roles and its custom ACL in its
 * tenant. A soft-deleted user is gone (null), as a deleted role is: a delete is recorded as `U -> null`,
 * its undo brings the same row back.
 *
 * The password hash is never in a snapshot, so it can never reach the action log, its `changes`, the
 * audit API or a CSV export. `passwordVersion` (sha256 of the stored hash) only tells that the password
 * changed; a password change therefore cannot be undone (it runs as a command without `restore`), and
 * every other restore leaves the password column as it is.
 */
export interface UserSnapshot extends Snapshot {
  id: string;
  tenantId: string;
  organizationId: string | null;
  email: string;
  name: string | null;
  hasPassword: boolean;
  passwordVersion: string | null;
  /** Role ids in the user's tenant, sorted. */
  roles: string[];
  /** The custom ACL (null: none, role ACLs apply). */
  acl: { isSuperAdmin: boolean; features: string[]; organizations: string[] | null } | null;
  createdAt: string;
}

export function passwordVersion(passwordHash: string | null): string | null {
  return passwordHash === null ? null : createHash('sha256').update(passwordHash).digest('hex');
}

interface UserRow {
  id: string;
  tenant_id: string;
  organization_id: string | null;
  email: string;
  name: string | null;
  password_hash: string | null;
  created_at: Date;
  deleted_at: Date | null;
}

/**
 * Locks the row (FOR UPDATE, as the user writers do) before reading, so the snapshot the bus takes
 * before a write is the state the write starts from.
 */
async function lockedRow(tx: EntityManager, userId: string): Promise<UserRow | undefined> {
  const [row] = await tx.query(
    `SELECT id, tenant_id, organization_id, email, name, password_hash, created_at, deleted_at
       FROM users WHERE id = $1 FOR UPDATE`,
    [userId],
  );
  return row;
}

export async function snapshotUser(tx: EntityManager, userId: string): Promise<UserSnapshot | null> {
  const row = await lockedRow(tx, userId);
  if (!row || row.deleted_at) return null;
  const roles: { role_id: string }[] = await tx.query(
    'SELECT role_id FROM user_roles WHERE tenant_id = $1 AND user_id = $2 ORDER BY role_id',
    [row.tenant_id, row.id],
  );
  const [acl] = await tx.query('SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [
    row.tenant_id,
    row.id,
  ]);
  return {
    id: row.id,
    tenantId: row.tenant_id,
    organizationId: row.organization_id,
    email: row.email,
    name: row.name,
    hasPassword: row.password_hash !== null,
    passwordVersion: passwordVersion(row.password_hash),
    roles: roles.map((r) => r.role_id),
    acl: acl ? { isSuperAdmin: acl.is_super_admin, features: acl.features, organizations: acl.organizations } : null,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

/** The soft delete of the users repository: flag, memberships, user ACL, sessions, unused tokens. */
export type SoftDelete = (tx: EntityManager, user: { id: string; tenantId: string }) => Promise<void>;

/**
 * Makes the user equal to the snapshot: null soft-deletes it (undo of a create, redo of a delete:
 * sessions and unused setup/reset tokens go too, and an undo never brings them back); otherwise the row
 * is brought back (deleted_at cleared) with the snapshot's fields, roles (those that still exist) and
 * ACL. The password column is never written: the restore refuses when the stored password is not the
 * snapshot's (`passwordVersion`), which only a password change causes.
 */
export async function restoreUser(tx: EntityManager, userId: string, snapshot: Snapshot | null, softDelete: SoftDelete): Promise<void> {
  const row = await lockedRow(tx, userId);
  if (!snapshot) {
    if (row && !row.deleted_at) await softDelete(tx, { id: row.id, tenantId: row.tenant_id });
    return;
  }
  const target = snapshot as UserSnapshot;
  if (!row) throw DomainError.badRequest('the user no longer exists and cannot be restored');
  if (passwordVersion(row.password_hash) !== target.passwordVersion) {
    throw DomainError.badRequest('the user’s password changed since this action; it can no longer be undone or redone');
  }
  const [emailTaken] = await tx.query(
    'SELECT 1 FROM users WHERE tenant_id = $1 AND lower(email) = lower($2) AND deleted_at IS NULL AND id <> $3',
    [row.tenant_id, target.email, userId],
  );
  if (emailTaken) throw DomainError.conflict('email already exists');
  if (target.organizationId !== null) {
    const [org] = await tx.query('SELECT 1 FROM organizations WHERE id = $1 AND tenant_id = $2', [target.organizationId, row.tenant_id]);
    if (!org) throw DomainError.badRequest('the user’s organization no longer exists; the user cannot be restored');
  }
  await tx.query(`UPDATE users SET organization_id = $2, email = $3, name = $4, deleted_at = NULL, updated_at = now() WHERE id = $1`, [
    userId,
    target.organizationId,
    target.email,
    target.name,
  ]);
  // Memberships: drop the extra ones, add the missing ones (of roles that still exist); the rest stay as they are.
  await tx.query('DELETE FROM user_roles WHERE tenant_id = $1 AND user_id = $2 AND role_id <> ALL($3::uuid[])', [
    row.tenant_id,
    userId,
    target.roles,
  ]);
  await tx.query(
    `INSERT INTO user_roles (tenant_id, user_id, role_id)
     SELECT $1, $2, r.id FROM roles r WHERE r.id = ANY($3::uuid[])
     ON CONFLICT (user_id, role_id) DO NOTHING`,
    [row.tenant_id, userId, target.roles],
  );
  await writeUserAcl(tx, row.tenant_id, userId, target.acl);
}
