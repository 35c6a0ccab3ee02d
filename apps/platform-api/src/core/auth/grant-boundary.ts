import { DomainError } from '@app/service-kit';
import type { AuthContext } from './auth-context.js';
import { hasFeature } from './feature-match.js';

/**
 * decisions.md "Grant boundary": a caller who is not a super administrator cannot grant
 * `isSuperAdmin`, `*`, or any feature (or wildcard) it does not hold itself, nor organizations
 * outside its own restriction, and cannot read or change a super administrator's ACL.
 */
export interface RequestedAcl {
  isSuperAdmin: boolean;
  features: string[];
  organizations: string[] | null;
}

export interface GrantCheck {
  /** What the caller may actually grant. */
  allowed: RequestedAcl;
  /** True when something was dropped or narrowed. */
  exceeded: boolean;
}

export function checkGrant(caller: AuthContext, requested: RequestedAcl): GrantCheck {
  if (caller.isSuperAdmin) return { allowed: requested, exceeded: false };
  const features = requested.features.filter((f) => f !== '*' && hasFeature(caller.acl.features, f));
  const callerOrgs = caller.acl.organizations;
  let organizations = requested.organizations;
  if (callerOrgs !== null) {
    organizations = organizations === null ? [...callerOrgs] : organizations.filter((o) => callerOrgs.includes(o));
  }
  const exceeded =
    requested.isSuperAdmin ||
    features.length !== requested.features.length ||
    JSON.stringify(organizations) !== JSON.stringify(requested.organizations);
  return { allowed: { isSuperAdmin: false, features, organizations }, exceeded };
}

/**
 * Does a resource of this organization (null: none) lie within the caller's organization
 * restriction? Super administrators and unrestricted callers reach every one; a restricted caller
 * never reaches a resource that belongs to no organization.
 */
export function withinCallerOrganizations(caller: AuthContext, organizationId: string | null): boolean {
  if (caller.isSuperAdmin || caller.acl.organizations === null) return true;
  return organizationId !== null && caller.acl.organizations.includes(organizationId);
}

/** 403 unless the caller may read or change an ACL that currently is `target`. */
export function assertMayManage(caller: AuthContext, target: { isSuperAdmin: boolean } | null): void {
  if (target?.isSuperAdmin && !caller.isSuperAdmin) {
    throw DomainError.forbidden('only a super administrator may manage a super administrator');
  }
}
