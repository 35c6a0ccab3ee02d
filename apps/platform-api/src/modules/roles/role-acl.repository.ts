import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { RequestedAcl } from '../../core/auth/grant-boundary.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** A stored role or user ACL. */
export type StoredAcl = RequestedAcl;

/** One tenant's ACL of a role, as a role snapshot holds it (`acls`). */
export interface SnapshotAcl extends StoredAcl {
  tenantId: string;
}

export interface AclRow {
  is_super_admin: boolean;
  features: string[];
  organizations: string[] | null;
}

export const toStoredAcl = (row: AclRow | null): StoredAcl | null =>
  row ? { isSuperAdmin: row.is_super_admin, features: row.features, organizations: row.organizations } : null;

/** jsonb parameter: null stays SQL null (no restriction), not the JSON literal `null`. */
export const organizationsParam = (organizations: string[] | null): string | null =>
  organizations === null ? null : JSON.stringify(organizations);

/** Every statement of `role_acls`: one row per tenant and role (a global role has one per tenant that uses it). */
@Injectable()
export class RoleAclRepository {
  async find(db: Db, scope: TenantScope, roleId: string): Promise<StoredAcl | null> {
    const row = await queryOne<AclRow>(
      db,
      `SELECT is_super_admin, features, organizations FROM role_acls WHERE tenant_id = $1 AND role_id = $2`,
      [scope.tenantId, roleId],
    );
    return toStoredAcl(row);
  }

  async upsert(db: Db, scope: TenantScope, input: { roleId: string; acl: StoredAcl }): Promise<void> {
    const { acl } = input;
    await execute(
      db,
      `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, role_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()`,
      [scope.tenantId, input.roleId, acl.isSuperAdmin, acl.features, organizationsParam(acl.organizations)],
    );
  }

  /** The bootstrap's `superadmin` role: a super-administrator ACL in the scope's tenant. */
  async grantSuperAdmin(db: Db, scope: TenantScope, roleId: string): Promise<void> {
    await execute(
      db,
      `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features) VALUES ($1, $2, true, '{}')
       ON CONFLICT (tenant_id, role_id) DO UPDATE SET is_super_admin = true, updated_at = now()`,
      [scope.tenantId, roleId],
    );
  }

  /**
   * Undo and redo of a role: replaces its ACLs (in `tenantId`; every tenant when null) by the
   * snapshot's, rows rewritten.
   */
  async replaceForRestore(db: Db, input: { roleId: string; tenantId: string | null; acls: SnapshotAcl[] }): Promise<void> {
    await execute(db, 'DELETE FROM role_acls WHERE role_id = $1 AND ($2::uuid IS NULL OR tenant_id = $2::uuid)', [
      input.roleId,
      input.tenantId,
    ]);
    await execute(
      db,
      `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
       SELECT a."tenantId", $1, a."isSuperAdmin", a.features, a.organizations
         FROM jsonb_to_recordset($2::jsonb) AS a("tenantId" uuid, "isSuperAdmin" boolean, features text[], organizations jsonb)`,
      [input.roleId, JSON.stringify(input.acls)],
    );
  }

  /**
   * Undo and redo of a role ACL write: makes the role's ACLs (in `tenantId`; every tenant when null)
   * equal to `acls`; rows that already match are left alone, so their `updated_at` keeps telling when
   * the ACL last really changed.
   */
  async syncForRestore(db: Db, input: { roleId: string; tenantId: string | null; acls: SnapshotAcl[] }): Promise<void> {
    await execute(
      db,
      'DELETE FROM role_acls WHERE role_id = $1 AND tenant_id <> ALL($2::uuid[]) AND ($3::uuid IS NULL OR tenant_id = $3::uuid)',
      [input.roleId, input.acls.map((a) => a.tenantId), input.tenantId],
    );
    await execute(
      db,
      `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
       SELECT a."tenantId", $1, a."isSuperAdmin", a.features, a.organizations
         FROM jsonb_to_recordset($2::jsonb) AS a("tenantId" uuid, "isSuperAdmin" boolean, features text[], organizations jsonb)
       ON CONFLICT (tenant_id, role_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()
       WHERE (role_acls.is_super_admin, role_acls.features, role_acls.organizations)
             IS DISTINCT FROM (EXCLUDED.is_super_admin, EXCLUDED.features, EXCLUDED.organizations)`,
      [input.roleId, JSON.stringify(input.acls)],
    );
  }
}
