import type { AuthContext } from '../auth/auth-context.js';
import { scopeOf, type TenantScope } from './tenant-scope.js';

/**
 * Every tenant at once: what a super administrator's reads reach when it names no tenant (a list
 * without a tenant filter, a user or role found by id wherever it lives). Only services build it, for
 * super administrators; a repository method that accepts it filters by tenant unless `tenantId` is null.
 */
export interface AllTenants {
  readonly tenantId: null;
  readonly organizationIds: null;
  readonly userId: string | null;
}

/** One tenant's scope, or (super administrators only) every tenant. */
export type TenantReach = TenantScope | AllTenants;

/** A super administrator reaches every tenant; anyone else the scope of its request. */
export function reachOf(auth: AuthContext): TenantReach {
  return auth.isSuperAdmin ? { tenantId: null, organizationIds: null, userId: auth.userId } : scopeOf(auth);
}

/**
 * The caller's scope moved to `tenantId`: a super administrator acting in another tenant, or anyone in
 * its own (services check which before they build it).
 */
export function scopeIn(auth: AuthContext, tenantId: string): TenantScope {
  return { ...scopeOf(auth), tenantId };
}
