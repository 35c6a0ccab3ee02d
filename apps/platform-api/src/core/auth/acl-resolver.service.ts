import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { systemScope } from '../scope/tenant-scope.js';
import { type AclRow, AclLookupRepository } from './acl-lookup.repository.js';
import type { ResolvedAcl } from './auth-context.js';

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
  constructor(
    private readonly dataSource: DataSource,
    private readonly lookup: AclLookupRepository,
  ) {}

  /** The user's access in the tenant (the JWT strategy, logins, refreshes and user management call it). */
  async resolve(userId: string, tenantId: string): Promise<ResolvedAcl> {
    const scope = systemScope(tenantId);
    const [roles, userAcl] = await Promise.all([
      this.lookup.membershipAcls(this.dataSource, scope, userId),
      this.lookup.userAcl(this.dataSource, scope, userId),
    ]);
    return combineAcls(
      roles.map((r) => ({
        id: r.id,
        name: r.name,
        acl: r.acl_id ? { is_super_admin: r.is_super_admin, features: r.features, organizations: r.organizations } : null,
      })),
      userAcl,
    );
  }
}
