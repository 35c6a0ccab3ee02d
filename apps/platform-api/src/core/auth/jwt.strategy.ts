import { createSecretKey } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { PLATFORM_CONFIG, type PlatformConfig } from '../../config/platform-config.js';
import { AccessAuthenticator } from './access-authenticator.service.js';
import type { AuthContext } from './auth-context.js';
import { AUTH_COOKIE, type AccessTokenClaims } from './jwt-claims.js';
import { readCookie } from './request-cookies.js';

/** The `auth_token` cookie, parsed only when there is no bearer header. */
const fromAuthCookie = (req: Request): string | null => readCookie(req, AUTH_COOKIE);

/**
 * The passport 'jwt' strategy, for guards built on @nestjs/passport (OptionalAuthGuard): verifies the
 * JWT (bearer header or `auth_token` cookie), then resolves the caller exactly as the global AuthGuard
 * does (AccessAuthenticator: live session, cached ACL).
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, 'jwt') {
  constructor(
    @Inject(PLATFORM_CONFIG) config: PlatformConfig,
    private readonly authenticator: AccessAuthenticator,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromExtractors([ExtractJwt.fromAuthHeaderAsBearerToken(), fromAuthCookie]),
      // A KeyObject, not the string: jsonwebtoken otherwise rebuilds a key from the string on every
      // verify (createPublicKey attempt + fallback). (passport-jwt's typings predate KeyObject.)
      secretOrKey: createSecretKey(Buffer.from(config.jwtSecret, 'utf8')) as unknown as Buffer,
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }

  async validate(claims: AccessTokenClaims): Promise<AuthContext> {
    return this.authenticator.contextOf(claims);
  }
}
