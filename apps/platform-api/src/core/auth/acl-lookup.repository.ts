import { Injectable } from '@nestjs/common';
import { type Db, queryPrepared } from '@app/service-kit';
import type { TenantScope } from '../scope/tenant-scope.js';

/** An ACL as stored (role_acls and user_acls share the columns). */
export interface AclRow {
  is_super_admin: boolean;
  features: string[];
  organizations: string[] | null;
}

/** A role the user holds in the tenant, with its ACL there (acl_id null: none, it grants nothing). */
export interface MembershipAclRow extends AclRow {
  id: string;
  name: string;
  acl_id: string | null;
}

/**
 * Reads what a user's access is resolved from, in the scope's tenant (modules/roles and modules/users
 * write those tables). On every cold request: fixed texts, prepared once per connection.
 */
@Injectable()
export class AclLookupRepository {
  membershipAcls(db: Db, scope: TenantScope, userId: string): Promise<MembershipAclRow[]> {
    return queryPrepared<MembershipAclRow>(
      db,
      `SELECT r.id, r.name, ra.is_super_admin, ra.features, ra.organizations, ra.id AS acl_id
         FROM user_roles ur
         JOIN roles r ON r.id = ur.role_id
         LEFT JOIN role_acls ra ON ra.role_id = r.id AND ra.tenant_id = ur.tenant_id
        WHERE ur.tenant_id = $1 AND ur.user_id = $2
        ORDER BY r.name`,
      [scope.tenantId, userId],
    );
  }

  async userAcl(db: Db, scope: TenantScope, userId: string): Promise<AclRow | null> {
    const [row] = await queryPrepared<AclRow>(
      db,
      'SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $1 AND user_id = $2',
      [scope.tenantId, userId],
    );
    return row ?? null;
  }
}
