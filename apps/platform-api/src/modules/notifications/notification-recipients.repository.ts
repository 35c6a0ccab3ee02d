import { Injectable } from '@nestjs/common';
import { query, queryOne, type Db } from '@app/service-kit';
import type { TenantScope } from '../../core/scope/tenant-scope.js';

/**
 * The ACL patterns that grant `feature` (decisions.md "Feature match"): `*`, the feature itself, and
 * `x.*` for every leading run of its segments (`x.*` grants `x` and everything under `x.`).
 * With these, "does this ACL grant the feature" is an array overlap Postgres answers for every user
 * in one query, instead of resolving users one by one.
 */
export function patternsGranting(feature: string): string[] {
  const segments = feature.split('.');
  const patterns = new Set(['*', feature]);
  for (let i = 1; i <= segments.length; i += 1) patterns.add(`${segments.slice(0, i).join('.')}.*`);
  return [...patterns];
}

/**
 * Users of a tenant whose resolved ACL grants the feature, resolved as AclResolverService does
 * (decisions.md "Resolution"): a super administrator (any role ACL or the user ACL) holds everything;
 * else a user ACL alone applies; else the union of the role ACLs.
 */
const USERS_WITH_FEATURE = `
  SELECT u.id
    FROM users u
    LEFT JOIN user_acls ua ON ua.tenant_id = u.tenant_id AND ua.user_id = u.id
    LEFT JOIN LATERAL (
      SELECT bool_or(ra.is_super_admin) AS super_admin, bool_or(ra.features && $2::text[]) AS grants
        FROM user_roles ur
        JOIN role_acls ra ON ra.role_id = ur.role_id AND ra.tenant_id = ur.tenant_id
       WHERE ur.tenant_id = u.tenant_id AND ur.user_id = u.id
    ) r ON true
   WHERE u.tenant_id = $1 AND u.deleted_at IS NULL
     AND (COALESCE(ua.is_super_admin, false) OR COALESCE(r.super_admin, false)
          OR CASE WHEN ua.id IS NOT NULL THEN ua.features && $2::text[] ELSE COALESCE(r.grants, false) END)`;

const ROLE_MEMBERS = `
  SELECT u.id
    FROM user_roles ur
    JOIN users u ON u.id = ur.user_id AND u.tenant_id = ur.tenant_id AND u.deleted_at IS NULL
   WHERE ur.tenant_id = $1 AND ur.role_id = $2`;

/**
 * Who a notification reaches, in the scope's tenant: ids in a stable order. Reads of the users,
 * roles and ACLs (written by their own modules). Recipients are any users of the tenant: the
 * sender's organizations do not narrow them.
 */
@Injectable()
export class NotificationRecipientsRepository {
  /** A role of the tenant, or a global role. */
  async roleVisible(db: Db, scope: TenantScope, roleId: string): Promise<boolean> {
    const row = await queryOne(db, 'SELECT 1 FROM roles WHERE id = $1 AND (tenant_id = $2 OR tenant_id IS NULL)', [roleId, scope.tenantId]);
    return row !== null;
  }

  roleMembers(db: Db, scope: TenantScope, roleId: string): Promise<string[]> {
    return ids(db, `${ROLE_MEMBERS} ORDER BY u.id`, [scope.tenantId, roleId]);
  }

  countRoleMembers(db: Db, scope: TenantScope, roleId: string): Promise<number> {
    return count(db, ROLE_MEMBERS, [scope.tenantId, roleId]);
  }

  usersWithFeature(db: Db, scope: TenantScope, feature: string): Promise<string[]> {
    return ids(db, `${USERS_WITH_FEATURE} ORDER BY u.id`, [scope.tenantId, patternsGranting(feature)]);
  }

  countUsersWithFeature(db: Db, scope: TenantScope, feature: string): Promise<number> {
    return count(db, USERS_WITH_FEATURE, [scope.tenantId, patternsGranting(feature)]);
  }

  /** The given ids that are users of the tenant and not deleted. */
  existingUsers(db: Db, scope: TenantScope, userIds: string[]): Promise<string[]> {
    return ids(db, 'SELECT id FROM users WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL', [scope.tenantId, userIds]);
  }
}

async function ids(db: Db, sql: string, params: unknown[]): Promise<string[]> {
  const rows = await query<{ id: string }>(db, sql, params);
  return rows.map((r) => r.id);
}

async function count(db: Db, sql: string, params: unknown[]): Promise<number> {
  const row = await queryOne<{ n: number }>(db, `SELECT count(*)::int AS n FROM (${sql}) recipients`, params);
  return row?.n ?? 0;
}
