import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ResolvedAcl } from './auth-context.js';

interface AclRow {
  is_super_admin: boolean;
  features: string[];
  organizations: string[] | null;
}

/**
 * decisions.md: super administrator if any role ACL or the user ACL says so; else a user ACL alone
 * applies (it replaces the role ACLs); else the union of the role ACLs.
 */
export function combineAcls(roles: { id: string; name: string; acl: AclRow | null }[], userAcl: AclRow | null): ResolvedAcl {
  const roleAcls = roles.map((r) => r.acl).filter((a): a is AclRow => a !== null);
  const isSuperAdmin = roleAcls.some((a) => a.is_super_admin) || Boolean(userAcl?.is_super_admin);
  let features: string[];
  let organizations: string[] | null;
  if (userAcl) {
    features = [...userAcl.features];
    organizations = userAcl.organizations;
  } else {
    features = [...new Set(roleAcls.flatMap((a) => a.features))];
    organizations =
      roleAcls.length === 0 || roleAcls.some((a) => a.organizations === null)
        ? null
        : [...new Set(roleAcls.flatMap((a) => a.organizations ?? []))];
  }
  return {
    isSuperAdmin,
    features: features.sort(),
    organizations: isSuperAdmin ? null : organizations,
    roleIds: roles.map((r) => r.id),
    roleNames: roles.map((r) => r.name),
    hasCustomAcl: userAcl !== null,
  };
}

@Injectable()
export class AclResolverService {
  constructor(private readonly dataSource: DataSource) {}

  async resolve(userId: string, tenantId: string): Promise<ResolvedAcl> {
    const [roles, userAcls] = await Promise.all([
      this.dataSource.query(
        `SELECT r.id, r.name, ra.is_super_admin, ra.features, ra.organizations, ra.id AS acl_id
           FROM user_roles ur
           JOIN roles r ON r.id = ur.role_id
           LEFT JOIN role_acls ra ON ra.role_id = r.id AND ra.tenant_id = ur.tenant_id
          WHERE ur.tenant_id = $2 AND ur.user_id = $1
          ORDER BY r.name`,
        [userId, tenantId],
      ),
      this.dataSource.query(`SELECT is_super_admin, features, organizations FROM user_acls WHERE tenant_id = $2 AND user_id = $1`, [
        userId,
        tenantId,
      ]),
    ]);
    return combineAcls(
      roles.map((r: AclRow & { id: string; name: string; acl_id: string | null }) => ({
        id: r.id,
        name: r.name,
        acl: r.acl_id ? { is_super_admin: r.is_super_admin, features: r.features, organizations: r.organizations } : null,
      })),
      userAcls[0] ?? null,
    );
  }
}
