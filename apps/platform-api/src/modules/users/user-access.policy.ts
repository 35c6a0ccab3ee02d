import { DomainError } from '@app/service-kit';
import type { AuthContext, ResolvedAcl } from '../../core/auth/auth-context.js';
import { assertMayManage, checkGrant, withinCallerOrganizations } from '../../core/auth/grant-boundary.js';
import type { AssignableRole } from '../roles/roles.repository.js';
import type { UserRecord } from './users.repository.js';

/**
 * Who may manage which user, and hand out which roles (decisions.md "Grant boundary"), as pure
 * checks over what the service has loaded. Super administrators pass every check.
 */

/** 403 unless the user lies within the caller's organization restriction (a user without organization does not). */
export function assertUserInCallerOrganizations(caller: AuthContext, user: UserRecord): void {
  if (!withinCallerOrganizations(caller, user.organizationId)) {
    throw DomainError.forbidden('user is outside your organizations');
  }
}

/**
 * 403 when a caller who is not a super administrator would change a user whose access exceeds its own:
 * a super administrator, a user holding features the caller lacks, or a user whose features reach
 * organizations outside the caller's restriction. Otherwise setting that user's password or email
 * would hand the caller access it could not grant itself.
 */
export function assertMayManageUser(caller: AuthContext, target: ResolvedAcl): void {
  assertMayManage(caller, target);
  const features = checkGrant(caller, {
    isSuperAdmin: target.isSuperAdmin,
    features: target.features,
    organizations: caller.acl.organizations,
  });
  if (features.exceeded) throw DomainError.forbidden('user holds features you do not have');
  // A user without any feature has no access anywhere, whatever organizations its ACL names.
  if (target.features.length === 0) return;
  const organizations = checkGrant(caller, { isSuperAdmin: false, features: [], organizations: target.organizations });
  if (organizations.exceeded) throw DomainError.forbidden('user has access outside your organizations');
}

/**
 * 400 when a requested role is not usable in the tenant (neither its own nor global); 403 when a
 * caller who is not a super administrator assigns a role whose ACL there exceeds its own access.
 */
export function assertMayAssignRoles(caller: AuthContext, requestedIds: string[], found: AssignableRole[]): void {
  const known = new Set(found.map((r) => r.id));
  const unknown = requestedIds.filter((id) => !known.has(id));
  if (unknown.length) throw DomainError.badRequest(`unknown role: ${unknown.join(', ')}`);
  for (const role of found) {
    if (role.acl && checkGrant(caller, role.acl).exceeded) {
      throw DomainError.forbidden(`you may not assign role "${role.name}": it grants access you do not have`);
    }
  }
}

/**
 * The organization a user may be placed in: one of the tenant (400 otherwise) within the caller's
 * restriction (403 otherwise). A caller restricted to organizations cannot place a user in none.
 */
export function assertOrganizationAssignable(caller: AuthContext, organizationId: string | null, inTenant: boolean): void {
  if (organizationId === null) {
    if (!caller.isSuperAdmin && caller.acl.organizations !== null) {
      throw DomainError.forbidden('a user you manage must belong to one of your organizations');
    }
    return;
  }
  if (!inTenant) throw DomainError.badRequest('organization not found in the tenant');
  if (!caller.canAccessOrganization(organizationId)) throw DomainError.forbidden('organization is outside your access');
}
