import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { UserAclRepository } from './user-acl.repository.js';
import { UsersRepository } from './users.repository.js';

/**
 * Snapshot and inverse of the user ACL command (`auth.users.acl.update`); the statements are the
 * repositories'. The snapshot first locks the user row the command's writer locks, so the snapshot the
 * bus takes before `execute` is the state the write really started from: a concurrent writer of the
 * same ACL waits for us instead of committing between our "before" and our write.
 */
@Injectable()
export class UserAclSnapshots {
  constructor(
    private readonly users: UsersRepository,
    private readonly userAcls: UserAclRepository,
  ) {}

  /**
   * The user's custom ACL in the user's tenant, or null when it has none (its role ACLs apply).
   * `features` keep their stored order, so a restore writes back exactly the row that was there.
   */
  async snapshot(tx: EntityManager, userId: string): Promise<Snapshot | null> {
    const user = await this.users.findStored(tx, { id: userId, lock: 'no key update' });
    if (!user) return null;
    const acl = await this.userAcls.find(tx, systemScope(user.tenant_id), userId);
    if (!acl) return null;
    return {
      userId,
      tenantId: user.tenant_id,
      isSuperAdmin: acl.isSuperAdmin,
      features: acl.features,
      organizations: acl.organizations,
    };
  }

  /** Upserts (only if different) or deletes the user's custom ACL; a deleted user's ACL is not brought back. */
  async restore(tx: EntityManager, userId: string, snapshot: Snapshot | null): Promise<void> {
    const user = await this.users.findStored(tx, { id: userId });
    if (!snapshot) {
      if (user) await this.userAcls.delete(tx, systemScope(user.tenant_id), userId);
      return;
    }
    if (!user || user.deleted_at) throw DomainError.badRequest('the user was deleted; its ACL cannot be restored');
    await this.userAcls.restore(tx, systemScope(user.tenant_id), {
      userId,
      acl: {
        isSuperAdmin: snapshot.isSuperAdmin as boolean,
        features: snapshot.features as string[],
        organizations: (snapshot.organizations as string[] | null | undefined) ?? null,
      },
    });
  }
}
