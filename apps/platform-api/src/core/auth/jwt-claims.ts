/** decisions.md "Sessions and tokens": HS256, 8 hours, claims sub, sid, tenantId, orgId, roles. */
export interface AccessTokenClaims {
  sub: string;
  sid: string;
  tenantId: string;
  orgId: string | null;
  roles: string[];
}

export const ACCESS_TOKEN_TTL_SECONDS = 8 * 60 * 60;
export const AUTH_COOKIE = 'auth_token';
export const SESSION_COOKIE = 'session_token';
