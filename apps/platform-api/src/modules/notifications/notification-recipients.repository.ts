import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

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

/** Who a role or feature notification reaches, in the sender's tenant: ids in a stable order. */
@Injectable()
export class NotificationRecipientsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A role of the tenant, or a global role. */
  async roleVisible(tenantId: string, roleId: string): Promise<boolean> {
    const rows = await this.dataSource.query('SELECT 1 FROM roles WHERE id = $1 AND (tenant_id = $2 OR tenant_id IS NULL)', [
      roleId,
      tenantId,
    ]);
    return rows.length > 0;
  }

  async roleMembers(tenantId: string, roleId: string): Promise<string[]> {
    return this.ids(`${ROLE_MEMBERS} ORDER BY u.id`, [tenantId, roleId]);
  }

  async countRoleMembers(tenantId: string, roleId: string): Promise<number> {
    return this.count(ROLE_MEMBERS, [tenantId, roleId]);
  }

  async usersWithFeature(tenantId: string, feature: string): Promise<string[]> {
    return this.ids(`${USERS_WITH_FEATURE} ORDER BY u.id`, [tenantId, patternsGranting(feature)]);
  }

  async countUsersWithFeature(tenantId: string, feature: string): Promise<number> {
    return this.count(USERS_WITH_FEATURE, [tenantId, patternsGranting(feature)]);
  }

  /** The given ids that are users of the tenant and not deleted. */
  async existingUsers(tenantId: string, userIds: string[]): Promise<string[]> {
    return this.ids('SELECT id FROM users WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL', [tenantId, userIds]);
  }

  private async ids(sql: string, params: unknown[]): Promise<string[]> {
    const rows: { id: string }[] = await this.dataSource.query(sql, params);
    return rows.map((r) => r.id);
  }

  private async count(sql: string, params: unknown[]): Promise<number> {
    const [row] = await this.dataSource.query(`SELECT count(*)::int AS n FROM (${sql}) recipients`, params);
    return row.n;
  }
}
