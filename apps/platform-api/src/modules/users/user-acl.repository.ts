import { Injectable } from '@nestjs/common';
import { type Db, execute } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { AclTableRepository, type StoredAcl } from '../roles/acl-table.repository.js';

/**
 * Every statement of `user_acls`: at most one custom ACL per tenant and user, which replaces the
 * user's role ACLs in that tenant.
 */
@Injectable()
export class UserAclRepository extends AclTableRepository {
  constructor() {
    super({ name: 'user_acls', owner: 'user_id' });
  }

  async upsert(db: Db, scope: TenantScope, input: { userId: string; acl: StoredAcl }): Promise<void> {
    await this.upsertAcl(db, scope, { ownerId: input.userId, acl: input.acl });
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
    await this.upsertAcl(db, scope, { ownerId: input.userId, acl, onlyChanged: true });
  }
}
