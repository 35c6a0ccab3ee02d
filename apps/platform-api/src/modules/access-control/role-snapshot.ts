import type { EntityManager } from 'typeorm';
import type { Snapshot, SnapshotScope } from '../../core/audit/command.js';
import { preparedQuery } from '@app/service-kit';

/**
 * A role as the action log records it: the row, its ACLs and its memberships, so an undo of a delete
 * brings back exactly what was there and an undo of a create notices later members. `$2` scopes the
 * ACLs and memberships to one tenant (null: every tenant): a global role has both in every tenant, and
 * an entry written by a tenant administrator records only its own tenant's (SnapshotScope).
 * Built in SQL (one statement) so the command bus can fold the "after" snapshot into the log INSERT.
 */
export const ROLE_SNAPSHOT_SQL = `
  SELECT jsonb_build_object(
           'id', r.id, 'tenantId', r.tenant_id, 'name', r.name,
           'createdAt', to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
           'acls', COALESCE((SELECT jsonb_agg(jsonb_build_object('tenantId', a.tenant_id, 'isSuperAdmin', a.is_super_admin,
                                                                 'features', a.features, 'organizations', a.organizations)
                                              ORDER BY a.tenant_id)
                               FROM role_acls a WHERE a.role_id = r.id AND ($2::uuid IS NULL OR a.tenant_id = $2::uuid)), '[]'::jsonb),
           'members', COALESCE((SELECT jsonb_agg(jsonb_build_object('userId', m.user_id, 'tenantId', m.tenant_id) ORDER BY m.user_id)
                                  FROM user_roles m WHERE m.role_id = r.id AND ($2::uuid IS NULL OR m.tenant_id = $2::uuid)), '[]'::jsonb)) AS snapshot
    FROM roles r WHERE r.id = $1`;

/** The "before" snapshot also locks the row (NO KEY UPDATE: memberships referencing it may still be added). */
export async function snapshotRole(
  tx: EntityManager,
  roleId: string,
  options: { forUpdate?: boolean; tenantId?: string | null } = {},
): Promise<Snapshot | null> {
  const [row] = await preparedQuery<{ snapshot: Snapshot }>(
    tx,
    `${ROLE_SNAPSHOT_SQL} ${options.forUpdate ? 'FOR NO KEY UPDATE OF r' : ''}`,
    [roleId, options.tenantId ?? null],
  );
  return (row?.snapshot as Snapshot | undefined) ?? null;
}

/**
 * Makes the role equal to the snapshot: row, and the ACLs and memberships of the scope's tenant (all
 * tenants when unscoped); null deletes it (cascading). A scoped snapshot never deletes a global role:
 * it does not hold the other tenants' ACLs and members that go with it.
 */
export async function restoreRole(
  tx: EntityManager,
  roleId: string,
  snapshot: Snapshot | null,
  scope: SnapshotScope = { tenantId: null },
): Promise<void> {
  const tenantId = scope.tenantId;
  if (!snapshot) {
    await tx.query('DELETE FROM roles WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [roleId, tenantId]);
    return;
  }
  await tx.query(
    `INSERT INTO roles (id, tenant_id, name, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (id) DO UPDATE SET tenant_id = EXCLUDED.tenant_id, name = EXCLUDED.name, updated_at = now()`,
    [roleId, snapshot.tenantId, snapshot.name, snapshot.createdAt],
  );
  await tx.query('DELETE FROM role_acls WHERE role_id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [roleId, tenantId]);
  await tx.query(
    `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
     SELECT a."tenantId", $1, a."isSuperAdmin", a.features, a.organizations
       FROM jsonb_to_recordset($2::jsonb) AS a("tenantId" uuid, "isSuperAdmin" boolean, features text[], organizations jsonb)`,
    [roleId, JSON.stringify(snapshot.acls ?? [])],
  );
  await tx.query('DELETE FROM user_roles WHERE role_id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [roleId, tenantId]);
  await tx.query(
    `INSERT INTO user_roles (user_id, role_id, tenant_id)
     SELECT m."userId", $1, m."tenantId" FROM jsonb_to_recordset($2::jsonb) AS m("userId" uuid, "tenantId" uuid)
      WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = m."userId")`,
    [roleId, JSON.stringify(snapshot.members ?? [])],
  );
}
