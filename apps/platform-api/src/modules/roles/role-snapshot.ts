import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { Snapshot, SnapshotScope } from '../../core/audit/command.js';
import { RoleAclRepository, type SnapshotAcl, type StoredAcl } from './role-acl.repository.js';
import { RolesRepository } from './roles.repository.js';

const ALL_TENANTS: SnapshotScope = { tenantId: null };

/**
 * Snapshots and inverses of the role commands (`auth.roles.*`) and of the role ACL command
 * (`auth.roles.acl.update`); the statements are the repositories'. A role is recorded with its ACLs
 * and memberships (RolesRepository's ROLE_SNAPSHOT_SQL), in one tenant when the entry is scoped.
 */
@Injectable()
export class RoleSnapshots {
  constructor(
    private readonly roles: RolesRepository,
    private readonly roleAcls: RoleAclRepository,
  ) {}

  /** The "before" snapshot also locks the row (NO KEY UPDATE: memberships referencing it may still be added). */
  snapshotRole(
    tx: EntityManager,
    roleId: string,
    options: { forUpdate?: boolean; tenantId?: string | null } = {},
  ): Promise<Snapshot | null> {
    return this.roles.snapshot(tx, { id: roleId, tenantId: options.tenantId ?? null, forUpdate: options.forUpdate });
  }

  /**
   * Makes the role equal to the snapshot: row, and the ACLs and memberships of the scope's tenant (all
   * tenants when unscoped); null deletes it (cascading). A scoped snapshot never deletes a global role:
   * it does not hold the other tenants' ACLs and members that go with it.
   */
  async restoreRole(tx: EntityManager, roleId: string, snapshot: Snapshot | null, scope: SnapshotScope = ALL_TENANTS): Promise<void> {
    const tenantId = scope.tenantId;
    if (!snapshot) {
      await this.roles.deleteForRestore(tx, { id: roleId, tenantId });
      return;
    }
    await this.roles.upsertForRestore(tx, {
      id: roleId,
      tenantId: snapshot.tenantId as string | null,
      name: snapshot.name as string,
      createdAt: snapshot.createdAt as string,
    });
    await this.roleAcls.replaceForRestore(tx, { roleId, tenantId, acls: (snapshot.acls ?? []) as SnapshotAcl[] });
    await this.roles.replaceMembersForRestore(tx, {
      roleId,
      tenantId,
      members: (snapshot.members ?? []) as { userId: string; tenantId: string }[],
    });
  }

  /**
   * A role ACL write is recorded as the role (`snapshotRole`) with its ACL and members in the tenant
   * whose ACL is written (the command's scope): never another tenant's of a global role. It first locks
   * the row the command's writers lock, so the snapshot the bus takes before `execute` is the state the
   * write really started from: a concurrent writer of the same ACL waits for us instead of committing
   * between our "before" and our write.
   */
  async snapshotRoleForAcl(tx: EntityManager, roleId: string, options: { tenantId?: string | null } = {}): Promise<Snapshot | null> {
    await this.roles.lockForAclWrite(tx, roleId);
    return this.snapshotRole(tx, roleId, { tenantId: options.tenantId ?? null });
  }

  /**
   * Makes the role's ACLs (of the scope's tenant; every tenant for an unscoped entry) equal to those of
   * the snapshot; rows that already match are left alone. The name and memberships are not this
   * command's: the bus has checked they still equal the other snapshot, and rewriting them could lose a
   * membership committed meanwhile.
   */
  async restoreRoleAcls(tx: EntityManager, roleId: string, snapshot: Snapshot | null, scope: SnapshotScope = ALL_TENANTS): Promise<void> {
    if (!snapshot) {
      // Never recorded by an ACL write (the role exists before and after it); kept for the contract.
      await this.restoreRole(tx, roleId, null, scope);
      return;
    }
    const acls = ((snapshot.acls ?? []) as SnapshotAcl[]).filter((a) => scope.tenantId === null || a.tenantId === scope.tenantId);
    await this.roleAcls.syncForRestore(tx, { roleId, tenantId: scope.tenantId, acls });
  }
}

/** The ACL part of an ACL snapshot (a user ACL, or one entry of a role's `acls`). */
export function aclOf(snapshot: Snapshot): StoredAcl {
  return {
    isSuperAdmin: Boolean(snapshot.isSuperAdmin),
    features: (snapshot.features as string[] | undefined) ?? [],
    organizations: (snapshot.organizations as string[] | null | undefined) ?? null,
  };
}

/** The per-tenant ACLs of a role snapshot (`acls`) that differ between `current` and `target`. */
export function changedRoleAcls(
  current: Snapshot | null,
  target: Snapshot | null,
): { tenantId: string; current: StoredAcl | null; target: StoredAcl | null }[] {
  const byTenant = (snapshot: Snapshot | null) =>
    new Map(((snapshot?.acls ?? []) as (Snapshot & { tenantId: string })[]).map((a) => [a.tenantId, aclOf(a)]));
  const before = byTenant(current);
  const after = byTenant(target);
  return [...new Set([...before.keys(), ...after.keys()])]
    .map((tenantId) => ({ tenantId, current: before.get(tenantId) ?? null, target: after.get(tenantId) ?? null }))
    .filter((c) => JSON.stringify(c.current) !== JSON.stringify(c.target));
}
