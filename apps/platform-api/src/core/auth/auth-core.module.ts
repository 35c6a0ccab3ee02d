import { Global, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { RateLimiterService } from '../rate-limit/rate-limiter.service.js';
import { AccessAuthenticator } from './access-authenticator.service.js';
import { AccessCacheService } from './access-cache.service.js';
import { AccessTokenVerifier } from './access-token-verifier.js';
import { AclLookupRepository } from './acl-lookup.repository.js';
import { AclResolverService } from './acl-resolver.service.js';
import { AuthGuard } from './auth.guard.js';
import { JwtStrategy } from './jwt.strategy.js';
import { SessionLookupRepository } from './session-lookup.repository.js';

/**
 * The authentication guard (createHttpApp puts it on every route that is not `@Public()`,
 * http-setup.ts), the ACL resolution and its caches, and the shared rate limiter.
 */
@Global()
@Module({
  imports: [PassportModule],
  providers: [
    AccessAuthenticator,
    AccessTokenVerifier,
    AccessCacheService,
    AclResolverService,
    AclLookupRepository,
    JwtStrategy,
    SessionLookupRepository,
    RateLimiterService,
    AuthGuard,
  ],
  exports: [AccessAuthenticator, AccessTokenVerifier, AccessCacheService, AclResolverService, RateLimiterService],
})
export class AuthCoreModule {}
