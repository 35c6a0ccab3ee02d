import { Injectable } from '@nestjs/common';
import { type Db, execute, queryOne } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { type AclRow, organizationsParam, type StoredAcl, toStoredAcl } from '../roles/role-acl.repository.js';

/**
 * Every statement of `user_acls`: at most one custom ACL per tenant and user, which replaces the
 * user's role ACLs in that tenant.
 */
@Injectable()
export class UserAclRepository {
  async find(db: Db, scope: TenantScope, userId: string): Promise<StoredAcl | null> {
    const row = await queryOne<AclRow>(
      db,
      `SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $1 AND user_id = $2`,
      [scope.tenantId, userId],
    );
    return toStoredAcl(row);
  }

  async upsert(db: Db, scope: TenantScope, input: { userId: string; acl: StoredAcl }): Promise<void> {
    const { acl } = input;
    await execute(
      db,
      `INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, user_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()`,
      [scope.tenantId, input.userId, acl.isSuperAdmin, acl.features, organizationsParam(acl.organizations)],
    );
  }

  async delete(db: Db, scope: TenantScope, userId: string): Promise<void> {
    await execute(db, 'DELETE FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [scope.tenantId, userId]);
  }

  /**
   * Makes the user's ACL row equal to `acl` (null: no custom ACL). An unchanged row is not written, so
   * its `updated_at` keeps telling when the ACL last really changed. Used by undo/redo of user ACLs and
   * of users.
   */
  async restore(db: Db, scope: TenantScope, input: { userId: string; acl: StoredAcl | null }): Promise<void> {
    const { acl } = input;
    if (!acl) {
      await this.delete(db, scope, input.userId);
      return;
    }
    await execute(
      db,
      `INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (tenant_id, user_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()
       WHERE (user_acls.is_super_admin, user_acls.features, user_acls.organizations)
             IS DISTINCT FROM (EXCLUDED.is_super_admin, EXCLUDED.features, EXCLUDED.organizations)`,
      [scope.tenantId, input.userId, acl.isSuperAdmin, acl.features, organizationsParam(acl.organizations)],
    );
  }
}
