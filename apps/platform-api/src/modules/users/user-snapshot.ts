import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { DomainError } from '@app/service-kit';
import type { Snapshot } from '../../core/audit/command.js';
import { systemScope } from '../../core/scope/tenant-scope.js';
import { OrganizationsRepository } from '../directory/organizations.repository.js';
import { RolesRepository } from '../roles/roles.repository.js';
import { UserAclRepository } from './user-acl.repository.js';
import { UserDeletionService } from './user-deletion.service.js';
import { UsersRepository } from './users.repository.js';

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

/** Snapshot and inverse of the user commands (`auth.users.*`); the statements are the repositories'. */
@Injectable()
export class UserSnapshots {
  constructor(
    private readonly users: UsersRepository,
    private readonly roles: RolesRepository,
    private readonly userAcls: UserAclRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly deletion: UserDeletionService,
  ) {}

  /**
   * Locks the row (FOR UPDATE, as the user writers do) before reading, so the snapshot the bus takes
   * before a write is the state the write starts from.
   */
  async snapshot(tx: EntityManager, userId: string): Promise<UserSnapshot | null> {
    const row = await this.users.findStored(tx, { id: userId, lock: 'update' });
    if (!row || row.deleted_at) return null;
    const scope = systemScope(row.tenant_id);
    const roles = await this.roles.roleIdsOfUser(tx, scope, row.id);
    const acl = await this.userAcls.find(tx, scope, row.id);
    return {
      id: row.id,
      tenantId: row.tenant_id,
      organizationId: row.organization_id,
      email: row.email,
      name: row.name,
      hasPassword: row.password_hash !== null,
      passwordVersion: passwordVersion(row.password_hash),
      roles,
      acl,
      createdAt: new Date(row.created_at).toISOString(),
    };
  }

  /**
   * Makes the user equal to the snapshot: null soft-deletes it (undo of a create, redo of a delete:
   * sessions and unused setup/reset tokens go too, and an undo never brings them back); otherwise the row
   * is brought back (deleted_at cleared) with the snapshot's fields, roles (those that still exist) and
   * ACL. The password column is never written: the restore refuses when the stored password is not the
   * snapshot's (`passwordVersion`), which only a password change causes.
   */
  async restore(tx: EntityManager, userId: string, snapshot: Snapshot | null): Promise<void> {
    const row = await this.users.findStored(tx, { id: userId, lock: 'update' });
    if (!snapshot) {
      if (row && !row.deleted_at) await this.deletion.softDelete(tx, systemScope(row.tenant_id), row.id);
      return;
    }
    const target = snapshot as UserSnapshot;
    if (!row) throw DomainError.badRequest('the user no longer exists and cannot be restored');
    if (passwordVersion(row.password_hash) !== target.passwordVersion) {
      throw DomainError.badRequest('the user’s password changed since this action; it can no longer be undone or redone');
    }
    const scope = systemScope(row.tenant_id);
    if (await this.users.emailTaken(tx, scope, { email: target.email, exceptUserId: userId }))
      throw DomainError.conflict('email already exists');
    if (target.organizationId !== null && !(await this.organizations.existsInReach(tx, scope, target.organizationId))) {
      throw DomainError.badRequest('the user’s organization no longer exists; the user cannot be restored');
    }
    await this.users.restore(tx, scope, { id: userId, organizationId: target.organizationId, email: target.email, name: target.name });
    // Memberships: drop the extra ones, add the missing ones (of roles that still exist); the rest stay as they are.
    await this.roles.restoreMembershipsOfUser(tx, scope, { userId, roleIds: target.roles });
    await this.userAcls.restore(tx, scope, { userId, acl: target.acl });
  }
}
