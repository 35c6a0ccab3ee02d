import type { EntityManager } from 'typeorm';
import type { Snapshot } from '../../core/audit/command.js';

/**
 * A role as the action log records it: the row, its ACL in every tenant, and its memberships, so an
 * undo of a delete brings back exactly what was there and an undo of a create notices later members.
 */
export async function snapshotRole(tx: EntityManager, roleId: string): Promise<Snapshot | null> {
  const [role] = await tx.query('SELECT id, tenant_id, name, created_at FROM roles WHERE id = $1', [roleId]);
  if (!role) return null;
  const acls = await tx.query(
    `SELECT tenant_id AS "tenantId", is_super_admin AS "isSuperAdmin", features, organizations
       FROM role_acls WHERE role_id = $1 ORDER BY tenant_id`,
    [roleId],
  );
  const members = await tx.query(
    `SELECT user_id AS "userId", tenant_id AS "tenantId" FROM user_roles WHERE role_id = $1 ORDER BY user_id`,
    [roleId],
  );
  return {
    id: role.id,
    tenantId: role.tenant_id,
    name: role.name,
    createdAt: new Date(role.created_at).toISOString(),
    acls,
    members,
  };
}

/** Makes the role equal to the snapshot: row, ACLs and memberships; null deletes it (cascading). */
export async function restoreRole(tx: EntityManager, roleId: string, snapshot: Snapshot | null): Promise<void> {
  if (!snapshot) {
    await tx.query('DELETE FROM roles WHERE id = $1', [roleId]);
    return;
  }
  await tx.query(
    `INSERT INTO roles (id, tenant_id, name, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, name = EXCLUDED.name, updated_at = now()`,
    [roleId, snapshot.tenantId, snapshot.name, snapshot.createdAt],
  );
  await tx.query('DELETE FROM role_acls WHERE role_id = $1', [roleId]);
  await tx.query(
    `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
     SELECT a."tenantId", $1, a."isSuperAdmin", a.features, a.organizations
       FROM jsonb_to_recordset($2::jsonb) AS a("tenantId" uuid, "isSuperAdmin" boolean, features text[], organizations jsonb)`,
    [roleId, JSON.stringify(snapshot.acls ?? [])],
  );
  await tx.query('DELETE FROM user_roles WHERE role_id = $1', [roleId]);
  await tx.query(
    `INSERT INTO user_roles (user_id, role_id, tenant_id)
     SELECT m."userId", $1, m."tenantId" FROM jsonb_to_recordset($2::jsonb) AS m("userId" uuid, "tenantId" uuid)
      WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = m."userId")`,
    [roleId, JSON.stringify(snapshot.members ?? [])],
  );
}
