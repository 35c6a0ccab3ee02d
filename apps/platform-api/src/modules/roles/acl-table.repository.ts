import { type Db, execute, queryOne } from '@app/service-kit';
import type { AclRow } from '../../core/auth/acl-lookup.repository.js';
import type { RequestedAcl } from '../../core/auth/grant-boundary.js';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/** A stored role or user ACL. */
export type StoredAcl = RequestedAcl;

export const toStoredAcl = (row: AclRow | null): StoredAcl | null =>
  row ? { isSuperAdmin: row.is_super_admin, features: row.features, organizations: row.organizations } : null;

/** jsonb parameter: null stays SQL null (no restriction), not the JSON literal `null`. */
export const organizationsParam = (organizations: string[] | null): string | null =>
  organizations === null ? null : JSON.stringify(organizations);

/** The ON CONFLICT update of an ACL row: the incoming columns, and `updated_at` now. */
export const SET_ACL_COLUMNS = `SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()`;

/** Restores skip a row that already matches, so its `updated_at` keeps telling when the ACL last really changed. */
export const aclChanged = (table: AclTable['name']): string =>
  `(${table}.is_super_admin, ${table}.features, ${table}.organizations)
             IS DISTINCT FROM (EXCLUDED.is_super_admin, EXCLUDED.features, EXCLUDED.organizations)`;

/** The two ACL tables: the same columns, one row per tenant and owner (a role or a user). */
export type AclTable = { name: 'role_acls'; owner: 'role_id' } | { name: 'user_acls'; owner: 'user_id' };

/**
 * The statements `role_acls` and `user_acls` share, written once: RoleAclRepository and
 * UserAclRepository (each its table's one writer) extend it with their own.
 */
export abstract class AclTableRepository {
  protected constructor(private readonly table: AclTable) {}

  /** The owner's ACL in the scope's tenant, or null. */
  async find(db: Db, scope: TenantScope, ownerId: string): Promise<StoredAcl | null> {
    const { name, owner } = this.table;
    const row = await queryOne<AclRow>(
      db,
      `SELECT is_super_admin, features, organizations FROM ${name} WHERE tenant_id = $1 AND ${owner} = $2`,
      [scope.tenantId, ownerId],
    );
    return toStoredAcl(row);
  }

  /** Writes the owner's ACL in the scope's tenant; with `onlyChanged`, a row that already matches is left alone. */
  protected async upsertAcl(db: Db, scope: TenantScope, input: { ownerId: string; acl: StoredAcl; onlyChanged?: boolean }): Promise<void> {
    const { name, owner } = this.table;
    const { acl } = input;
    await execute(
      db,
      `INSERT INTO ${name} (tenant_id, ${owner}, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5::jsonb)
       ON CONFLICT (tenant_id, ${owner}) DO UPDATE
         ${SET_ACL_COLUMNS}${input.onlyChanged ? `\n       WHERE ${aclChanged(name)}` : ''}`,
      [scope.tenantId, input.ownerId, acl.isSuperAdmin, acl.features, organizationsParam(acl.organizations)],
    );
  }
}
