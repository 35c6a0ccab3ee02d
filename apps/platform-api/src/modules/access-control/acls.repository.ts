import { Injectable } from '@nestjs/common';
import type { RequestedAcl } from '../../core/auth/grant-boundary.js';
import type { Queryable } from './roles.repository.js';

/** A stored role or user ACL. */
export type StoredAcl = RequestedAcl;

/** A user whose ACL is read or written. */
export interface AclUser {
  id: string;
  tenantId: string;
  organizationId: string | null;
}

interface AclRow {
  is_super_admin: boolean;
  features: string[];
  organizations: string[] | null;
}

const toAcl = (row: AclRow | undefined): StoredAcl | null =>
  row ? { isSuperAdmin: row.is_super_admin, features: row.features, organizations: row.organizations } : null;

/** SQL of role_acls and user_acls (one row per tenant and role, or tenant and user). */
@Injectable()
export class AclsRepository {
  async roleAcl(db: Queryable, tenantId: string, roleId: string): Promise<StoredAcl | null> {
    const rows: AclRow[] = await db.query(
      `SELECT is_super_admin, features, organizations FROM role_acls WHERE tenant_id = $1 AND role_id = $2`,
      [tenantId, roleId],
    );
    return toAcl(rows[0]);
  }

  async upsertRoleAcl(db: Queryable, tenantId: string, roleId: string, acl: StoredAcl): Promise<void> {
    await db.query(
      `INSERT INTO role_acls (tenant_id, role_id, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, role_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()`,
      [tenantId, roleId, acl.isSuperAdmin, acl.features, jsonOrNull(acl.organizations)],
    );
  }

  async userAcl(db: Queryable, tenantId: string, userId: string): Promise<StoredAcl | null> {
    const rows: AclRow[] = await db.query(
      `SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $1 AND user_id = $2`,
      [tenantId, userId],
    );
    return toAcl(rows[0]);
  }

  async upsertUserAcl(db: Queryable, tenantId: string, userId: string, acl: StoredAcl): Promise<void> {
    await db.query(
      `INSERT INTO user_acls (tenant_id, user_id, is_super_admin, features, organizations)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, user_id) DO UPDATE
         SET is_super_admin = EXCLUDED.is_super_admin, features = EXCLUDED.features,
             organizations = EXCLUDED.organizations, updated_at = now()`,
      [tenantId, userId, acl.isSuperAdmin, acl.features, jsonOrNull(acl.organizations)],
    );
  }

  async deleteUserAcl(db: Queryable, tenantId: string, userId: string): Promise<void> {
    await db.query('DELETE FROM user_acls WHERE tenant_id = $1 AND user_id = $2', [tenantId, userId]);
  }

  /** Does any of the user's roles carry a super-administrator ACL in the tenant? */
  async hasSuperAdminRole(db: Queryable, tenantId: string, userId: string): Promise<boolean> {
    const rows = await db.query(
      `SELECT 1 FROM user_roles ur
         JOIN role_acls ra ON ra.role_id = ur.role_id AND ra.tenant_id = ur.tenant_id
        WHERE ur.tenant_id = $1 AND ur.user_id = $2 AND ra.is_super_admin
        LIMIT 1`,
      [tenantId, userId],
    );
    return rows.length > 0;
  }

  /**
   * A user that is not deleted; in `tenantId` only, or (null, a super administrator) in any tenant.
   * `lock` serialises concurrent ACL writes for the same user, also when no ACL row exists yet.
   */
  async findUser(db: Queryable, userId: string, tenantId: string | null, lock = false): Promise<AclUser | null> {
    const rows: { id: string; tenant_id: string; organization_id: string | null }[] = await db.query(
      `SELECT id, tenant_id, organization_id FROM users
        WHERE id = $1 AND ($2::uuid IS NULL OR tenant_id = $2) AND deleted_at IS NULL
        ${lock ? 'FOR NO KEY UPDATE' : ''}`,
      [userId, tenantId],
    );
    return rows[0] ? { id: rows[0].id, tenantId: rows[0].tenant_id, organizationId: rows[0].organization_id } : null;
  }

  /** Those of `ids` that are not organizations of the tenant. */
  async foreignOrganizations(db: Queryable, tenantId: string, ids: string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const rows: { id: string }[] = await db.query('SELECT id FROM organizations WHERE tenant_id = $1 AND id = ANY($2::uuid[])', [
      tenantId,
      ids,
    ]);
    const known = new Set(rows.map((r) => r.id));
    return ids.filter((id) => !known.has(id));
  }
}

function jsonOrNull(organizations: string[] | null): string | null {
  return organizations === null ? null : JSON.stringify(organizations);
}
