import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { DomainError } from '@app/service-kit';
import { AccessCacheService, type CachedSession } from './access-cache.service.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { AclResolverService } from './acl-resolver.service.js';
import { duringAuthentication } from './auth-lookup.js';
import { AuthContext, type ResolvedAcl } from './auth-context.js';
import { AUTH_COOKIE, type AccessTokenClaims } from './jwt-claims.js';
import { readCookie } from './request-cookies.js';

/**
 * The access token of a request, where passport-jwt's extractors looked: `Authorization: Bearer <jwt>`
 * (scheme in any case; the first two whitespace-separated words of the header), else the
 * `auth_token` cookie. Split, not matched with a regex: an unanchored pattern over a 16 KB header
 * would backtrack quadratically.
 */
export function accessTokenOf(req: Request): string | null {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const [scheme, value] = header.trim().split(/\s+/, 2);
    if (value && scheme.toLowerCase() === 'bearer') return value;
  }
  return readCookie(req, AUTH_COOKIE);
}

/**
 * Who a request comes from: the access token verified (cached per token, AccessTokenVerifier), its
 * session live (exists, in an active tenant; cached) and the caller's ACL (cached). A warm request
 * does no SQL and no signature check. The AuthGuard (bound to every route not `@Public()`) and the passport strategy share it.
 *
 * Both methods answer synchronously when the session and the ACL are cached, the warm path of nearly
 * every request, and return a promise only when something must be loaded: each `await` of a value
 * already known costs a promise and a microtask turn, which added up to several percent of a cheap
 * authenticated request (bench/README.md, issue #18). A caller awaits the result either way.
 */
@Injectable()
export class AccessAuthenticator {
  constructor(
    private readonly tokens: AccessTokenVerifier,
    private readonly cache: AccessCacheService,
    private readonly resolver: AclResolverService,
  ) {}

  /** The caller, or null without a valid, current token; throws 401 for a token whose session ended. */
  authenticate(req: Request): AuthContext | null | Promise<AuthContext | null> {
    const token = accessTokenOf(req);
    const claims = token ? this.tokens.verify(token) : null;
    return claims ? this.contextOf(claims) : null;
  }

  /** The context of verified claims: their session must live and belong to them (401 otherwise). */
  contextOf(claims: AccessTokenClaims): AuthContext | Promise<AuthContext> {
    if (!claims?.sub || !claims.sid || !claims.tenantId) throw DomainError.unauthorized('invalid token');
    const session = this.cache.cachedLiveSession(claims.sid);
    const acl = session === undefined ? undefined : this.cache.cachedAcl(claims.sub, claims.tenantId);
    if (session !== undefined && acl) return this.contextFrom(claims, session, acl);
    return this.loadContext(claims);
  }

  /** A database failure while loading is 503, never 401 or 500 (duringAuthentication). */
  private async loadContext(claims: AccessTokenClaims): Promise<AuthContext> {
    const session = await duringAuthentication(() => this.cache.liveSession(claims.sid));
    this.checkSession(claims, session);
    const acl = await duringAuthentication(() =>
      this.cache.getAcl(claims.sub, claims.tenantId, () => this.resolver.resolve(claims.sub, claims.tenantId)),
    );
    return this.contextFrom(claims, session, acl);
  }

  private contextFrom(claims: AccessTokenClaims, session: CachedSession | null, acl: ResolvedAcl): AuthContext {
    this.checkSession(claims, session);
    return new AuthContext(claims.sub, claims.tenantId, claims.orgId ?? null, claims.sid, acl);
  }

  private checkSession(claims: AccessTokenClaims, session: CachedSession | null): asserts session is CachedSession {
    if (!session || session.userId !== claims.sub || session.tenantId !== claims.tenantId) {
      throw DomainError.unauthorized('session expired or revoked');
    }
  }
}
