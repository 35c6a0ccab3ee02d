import { Injectable } from '@nestjs/common';
import { type Db, execute } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { aclChanged, AclTableRepository, SET_ACL_COLUMNS, type StoredAcl } from './acl-table.repository.js';

export type { StoredAcl } from './acl-table.repository.js';

/** One tenant's ACL of a role, as a role snapshot holds it (`acls`). */
export interface SnapshotAcl extends StoredAcl {
  tenantId: string;
}

/** Every statement of `role_acls`: one row per tenant and role (a global role has one per tenant that uses it). */
@Injectable()
export class RoleAclRepository extends AclTableRepository {
  constructor() {
    super({ name: 'role_acls', owner: 'role_id' });
  }

  async upsert(db: Db, scope: TenantScope, input: { roleId: string; acl: StoredAcl }): Promise<void> {
    await this.upsertAcl(db, scope, { ownerId: input.roleId, acl: input.acl });
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
         ${SET_ACL_COLUMNS}
       WHERE ${aclChanged('role_acls')}`,
      [input.roleId, JSON.stringify(input.acls)],
    );
  }
}
