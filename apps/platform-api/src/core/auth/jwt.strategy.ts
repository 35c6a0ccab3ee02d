import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { DomainError } from '@app/service-kit';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { AccessCacheService } from './access-cache.service.js';
import { AclResolverService } from './acl-resolver.service.js';
import { AuthContext } from './auth-context.js';
import { AUTH_COOKIE, type AccessTokenClaims } from './jwt-claims.js';
import { readCookie } from './request-cookies.js';

/** The `auth_token` cookie, parsed only when there is no bearer header. */
const fromAuthCookie = (req: Request): string | null => readCookie(req, AUTH_COOKIE);

/**
 * Verifies the JWT (bearer header or `auth_token` cookie), then checks that its session still exists
 * (in an active tenant) and resolves the caller's ACL; both are cached so a warm request does no SQL.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
    private readonly cache: AccessCacheService,
    private readonly resolver: AclResolverService,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromExtractors([ExtractJwt.fromAuthHeaderAsBearerToken(), fromAuthCookie]),
      // A KeyObject, not the string: jsonwebtoken otherwise rebuilds a key from the string on every
      // verify (createPublicKey attempt + fallback), which was the largest CPU cost of a request.
      // (passport-jwt's typings predate KeyObject; jsonwebtoken.verify accepts it.)
      secretOrKey: createSecretKey(Buffer.from(config.jwtSecret, 'utf8')) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  async validate(claims: AccessTokenClaims): Promise<AuthContext> {
    if (!claims?.sub || !claims.sid || !claims.tenantId) throw DomainError.unauthorized('invalid token');
    const session = await this.cache.liveSession(claims.sid);
    if (!session || session.userId !== claims.sub || session.tenantId !== claims.tenantId) {
      throw DomainError.unauthorized('session expired or revoked');
    }
    const acl = await this.cache.getAcl(claims.sub, claims.tenantId, () => this.resolver.resolve(claims.sub, claims.tenantId));
    return new AuthContext(claims.sub, claims.tenantId, claims.orgId ?? null, claims.sid, acl);
  }
}
