import type { AuthContext } from '../auth/auth-context.js';

/**
 * Whose data a call may touch: the one scope value every repository method that reads or writes
 * tenant data takes, always second, `(db, scope, input)`. Every such query filters by `tenantId`;
 * `organizationIds` narrows organization-owned rows (null: every organization of the tenant).
 */
export interface TenantScope {
  readonly tenantId: string;
  /** null: no organization restriction (also for super administrators). */
  readonly organizationIds: readonly string[] | null;
  /** The acting user; null for work the system does on its own (jobs, bootstrap). */
  readonly userId: string | null;
}

/** The scope of an authenticated request. */
export function scopeOf(auth: AuthContext): TenantScope {
  return {
    tenantId: auth.tenantId,
    organizationIds: auth.isSuperAdmin ? null : auth.acl.organizations,
    userId: auth.userId,
  };
}

/** The scope of work the system does in a tenant on nobody's behalf (a job, the bootstrap). */
export function systemScope(tenantId: string): TenantScope {
  return { tenantId, organizationIds: null, userId: null };
}
