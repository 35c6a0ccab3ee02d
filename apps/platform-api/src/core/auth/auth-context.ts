import { hasAllFeatures } from './feature-match.js';

/** The resolved access of a user in a tenant (decisions.md "Resolution for (user, tenant)"). */
export interface ResolvedAcl {
  isSuperAdmin: boolean;
  features: string[];
  /** null: no organization restriction. */
  organizations: string[] | null;
  roleIds: string[];
  roleNames: string[];
  hasCustomAcl: boolean;
}

/** The caller, as every service method that touches tenant data receives it (first argument). */
export class AuthContext {
  constructor(
    readonly userId: string,
    readonly tenantId: string,
    readonly organizationId: string | null,
    readonly sessionId: string,
    readonly acl: ResolvedAcl,
  ) {}

  get isSuperAdmin(): boolean {
    return this.acl.isSuperAdmin;
  }

  /** Super administrators hold every feature. */
  can(...features: string[]): boolean {
    return this.acl.isSuperAdmin || hasAllFeatures(this.acl.features, features);
  }

  /** May the caller act in this organization? (null organization restriction = all.) */
  canAccessOrganization(organizationId: string): boolean {
    return this.acl.isSuperAdmin || this.acl.organizations === null || this.acl.organizations.includes(organizationId);
  }
}
