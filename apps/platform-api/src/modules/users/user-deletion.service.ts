import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { TenantScope } from '../../core/scope/tenant-scope.js';
import { AuthTokensRepository } from '../auth/auth-tokens.repository.js';
import { SessionsRepository } from '../auth/sessions.repository.js';
import { RolesRepository } from '../roles/roles.repository.js';
import { UserAclRepository } from './user-acl.repository.js';
import { UsersRepository } from './users.repository.js';

/**
 * A user's soft delete, shared by DELETE /auth/users and the undo of a create (or redo of a delete):
 * marks the user deleted and removes what would keep granting access or let someone take the account
 * over: memberships, the user ACL, unused reset/setup tokens and sessions, each through the repository
 * that owns the table, in the caller's transaction.
 */
@Injectable()
export class UserDeletionService {
  constructor(
    private readonly users: UsersRepository,
    private readonly roles: RolesRepository,
    private readonly userAcls: UserAclRepository,
    private readonly tokens: AuthTokensRepository,
    private readonly sessions: SessionsRepository,
  ) {}

  async softDelete(tx: EntityManager, scope: TenantScope, userId: string): Promise<void> {
    await this.users.markDeleted(tx, scope, userId);
    await this.roles.deleteMembershipsOfUser(tx, scope, userId);
    await this.userAcls.delete(tx, scope, userId);
    await this.tokens.voidAllOfUser(tx, scope, userId);
    await this.sessions.deleteOfUser(tx, scope, { userId });
  }
}
